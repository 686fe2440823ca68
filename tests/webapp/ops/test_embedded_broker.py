"""The embedded broker (``webapp.ops.embedded_broker``): a worker asked to stop stops waiting for
messages at once instead of at the end of Celery's wait, and takes no more; otherwise
messages arrive."""

from __future__ import annotations

import pytest
from celery.worker import state
from kombu import Connection, Exchange, Queue


@pytest.fixture
def broker(tmp_path):
    folders = {name: tmp_path / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir()
    connection = Connection(
        "filesystem://",
        transport="webapp.ops.embedded_broker:Transport",
        transport_options={
            "data_folder_in": str(folders["queue"]),
            "data_folder_out": str(folders["queue"]),
            "data_folder_processed": str(folders["processed"]),
            "control_folder": str(folders["control"]),
            "polling_interval": 0.05,
        },
    )
    with connection:
        yield connection


def _consume(connection, received: list, name: str):
    # A queue of the test's own: kombu keeps the exchanges it declared for the process.
    queue = Queue(name, Exchange(name, type="direct"), routing_key=name)
    return connection.Consumer(
        queue, callbacks=[lambda body, message: (received.append(body), message.ack())]
    )


@pytest.mark.timeout(60)
def test_a_worker_asked_to_stop_stops_waiting_and_takes_no_more(broker, monkeypatch):
    received: list = []
    with _consume(broker, received, "stopping"):
        monkeypatch.setattr(state, "should_stop", 0)
        # An hour's wait, ended by the stop request (a hang fails at the test's timeout).
        with pytest.raises(TimeoutError):
            broker.drain_events(timeout=3600)
        # A message waiting is left for the next start: no task starts after a stop.
        broker.Producer().publish(
            {"run": 2}, exchange="stopping", routing_key="stopping", serializer="json"
        )
        with pytest.raises(TimeoutError):
            broker.drain_events(timeout=3600)
    assert received == []


@pytest.mark.timeout(60)
def test_a_message_still_arrives_while_no_stop_is_asked(broker):
    received: list = []
    with _consume(broker, received, "arriving"):
        broker.Producer().publish(
            {"run": 1}, exchange="arriving", routing_key="arriving", serializer="json"
        )
        broker.drain_events(timeout=30)
    assert received == [{"run": 1}]
