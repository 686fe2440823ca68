"""A worker host's capacity ledger: runs fit or wait, and a GPU is never given twice."""

import subprocess
import sys

import pytest

from webapp.runs.capacity import CapacityError, HostCapacity, HostResources


@pytest.fixture
def host(tmp_path):
    return HostCapacity(
        tmp_path / "ledger.json",
        HostResources(cpus=4, memory_bytes=16 * 1024**3, gpu_ids=("0", "1")),
    )


def test_gpus_are_never_given_to_two_runs(host):
    a = host.reserve("a", cpus=1, memory=1024**3, gpus=1)
    b = host.reserve("b", cpus=1, memory=1024**3, gpus=1)
    assert a.gpu_ids and b.gpu_ids and set(a.gpu_ids).isdisjoint(b.gpu_ids)
    assert host.reserve("c", cpus=1, memory=1024**3, gpus=1) is None  # both GPUs held
    host.release("a")
    c = host.reserve("c", cpus=1, memory=1024**3, gpus=1)
    assert c.gpu_ids == a.gpu_ids


def test_cpu_and_memory_admission(host):
    assert host.reserve("a", cpus=3, memory=8 * 1024**3, gpus=0)
    assert host.reserve("b", cpus=2, memory=1024**3, gpus=0) is None  # 5 CPUs > 4
    assert host.reserve("c", cpus=1, memory=9 * 1024**3, gpus=0) is None  # 17 GiB > 16
    assert host.reserve("d", cpus=1, memory=8 * 1024**3, gpus=0)


def test_a_request_larger_than_the_host_is_an_error(host):
    with pytest.raises(CapacityError, match="36 CPUs requested, the host has 4"):
        host.reserve("x", cpus=36, memory=None, gpus=0)
    with pytest.raises(CapacityError, match="GPU"):
        host.reserve("y", cpus=1, memory=None, gpus=3)


def test_reservations_of_dead_processes_are_dropped(host, tmp_path):
    code = (
        "import sys; sys.path.insert(0, '.');"
        "from webapp.runs.capacity import HostCapacity, HostResources;"
        f"h = HostCapacity({str(tmp_path / 'ledger.json')!r}, HostResources(4, 16 * 1024**3, ('0', '1')));"
        "assert h.reserve('other', 4, 0, 2)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    # The process that reserved everything has exited: its reservation no longer counts.
    assert host.reserve("mine", cpus=4, memory=0, gpus=2) is not None
    assert set(host.in_use()) == {"mine"}


def test_a_redelivered_run_keeps_its_reservation(host):
    first = host.reserve("run-1", cpus=2, memory=0, gpus=1)
    again = host.reserve("run-1", cpus=2, memory=0, gpus=1)
    assert again.gpu_ids == first.gpu_ids and len(host.in_use()) == 1
