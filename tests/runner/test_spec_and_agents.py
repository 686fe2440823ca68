"""Run specs, agent definitions, image tags and the container's configuration (no engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner import (
    OUTCOME_MESSAGES,
    AgentConfigError,
    NetworkPolicy,
    Outcome,
    Resources,
    RunSpec,
    find_agent,
    load_agent,
    parse_size,
    shipped_agents,
    spec_for_agent,
)
from runner.agent_definition import agents_in
from runner.docker_backend import container_kwargs
from runner.images import agent_image_ref, base_image_ref
from runner.reaper import parse_docker_time
from runner.spec import RunDirs


def test_parse_size_units_are_binary_and_typos_fail():
    assert parse_size("512m") == 512 * 1024**2
    assert parse_size("4G") == 4 * 1024**3
    assert parse_size("2GiB") == 2 * 1024**3
    assert parse_size("1.5g") == int(1.5 * 1024**3)
    assert parse_size(1024) == 1024
    for bad in ("", "12x", "-1g", "0"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_every_outcome_has_its_own_message():
    assert set(OUTCOME_MESSAGES) == set(Outcome)
    assert len(set(OUTCOME_MESSAGES.values())) == len(Outcome)
    assert {o.value for o in Outcome} >= {
        "completed",
        "timed_out",
        "out_of_memory",
        "failed",
        "cancelled",
        "harness_error",
    }


def test_resources_reject_impossible_values():
    with pytest.raises(ValueError):
        Resources(cpus=0)
    with pytest.raises(ValueError):
        Resources(gpus=2, gpu_ids=("0",))
    with pytest.raises(ValueError):
        RunSpec(image="x", command=(), competition_id="c")


def _dirs(tmp_path: Path) -> RunDirs:
    return RunDirs(output=tmp_path / "out", data=tmp_path / "data" / "c" / "prepared" / "public")


def test_container_is_locked_down_and_sees_only_public_data(tmp_path):
    spec = RunSpec(
        image="img",
        command=("python3", "main.py"),
        competition_id="c",
        resources=Resources(
            cpus=1.5, memory=parse_size("1g"), shm=parse_size("64m"), pids=64, gpus=0
        ),
    )
    kwargs = container_kwargs(spec, _dirs(tmp_path), now=1000.0)
    assert kwargs["network_mode"] == "none"
    assert kwargs["cap_drop"] == ["ALL"] and kwargs["cap_add"] == ["SETUID", "SETGID", "SETPCAP"]
    no_new_privileges, seccomp = kwargs["security_opt"]
    assert no_new_privileges == "no-new-privileges"
    profile = json.loads(seccomp.removeprefix("seccomp="))
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    denied = {n for rule in profile["syscalls"] if "args" not in rule for n in rule["names"]}
    assert {
        "keyctl",
        "bpf",
        "userfaultfd",
        "perf_event_open",
        "ptrace",
        "mount",
        "unshare",
    } <= denied
    assert {"setns", "open_by_handle_at", "init_module", "kexec_load", "io_uring_setup"} <= denied
    families = {
        rule["args"][0]["value"]
        for rule in profile["syscalls"]
        if "socket" in rule["names"] and rule["args"][0]["op"] == "SCMP_CMP_EQ"
    }
    assert {40, 17, 15, 31, 38, 30, 21, 24, 26, 29, 39, 44} <= families
    assert not families & {1, 2, 10, 16}  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
    # The container runs the watchdog as root; the agent is started as this user by exec.
    assert kwargs["user"] == "0:0" and kwargs["init"] is True and kwargs["auto_remove"] is True
    assert spec.user == "59999:59999"
    assert kwargs["entrypoint"] == ["sleep"]
    assert kwargs["command"] == [str(int(spec.time_limit_s + spec.kill_grace_s) + 1)]
    assert kwargs["labels"]["org.mleboard.deadline"] == str(int(1000 + spec.time_limit_s))
    assert int(kwargs["labels"]["org.mleboard.kill-after"]) > 1000 + spec.time_limit_s
    assert kwargs["read_only"] is True
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == 1024**3
    assert kwargs["nano_cpus"] == 1_500_000_000
    assert kwargs["pids_limit"] == 64 and kwargs["shm_size"] == 64 * 1024**2
    assert "device_requests" not in kwargs
    mounts = {m["Target"]: m for m in kwargs["mounts"]}
    assert all(m["ReadOnly"] for m in kwargs["mounts"])
    assert mounts["/home/data"]["Source"].endswith("prepared/public")
    # The outputs and scratch are in memory, bounded: nothing the agent writes is on the host.
    tmpfs = kwargs["tmpfs"]
    for target in ("/home/submission", "/home/logs", "/home/code"):
        assert target not in mounts
        assert f"size={spec.output_max_bytes}" in tmpfs[target] and "uid=59999" in tmpfs[target]
    assert f"size={spec.scratch_bytes}" in tmpfs["/tmp"]
    assert not any("private" in m["Source"] for m in kwargs["mounts"])
    assert kwargs["environment"]["DATA_DIR"] == "/home/data"
    assert kwargs["environment"]["HOME"] == "/tmp/home"
    # A quota of 1.5 CPUs: the numerical libraries start 2 threads, not one per host CPU.
    assert kwargs["environment"]["OMP_NUM_THREADS"] == "2"


def test_thread_counts_follow_the_runs_cpus_unless_the_agent_sets_them(tmp_path):
    from runner.backend import THREAD_COUNT_VARIABLES
    from runner.local_backend import local_env

    def env(**fields) -> dict[str, str]:
        spec = RunSpec(image="img", command=("true",), competition_id="c", **fields)
        return local_env(spec, _dirs(tmp_path))

    on_four = env(resources=Resources(cpus=4))
    assert {name: on_four[name] for name in THREAD_COUNT_VARIABLES} == dict.fromkeys(
        THREAD_COUNT_VARIABLES, "4"
    )
    assert env(resources=Resources(cpus=0.5))["OPENBLAS_NUM_THREADS"] == "1"
    assert not set(THREAD_COUNT_VARIABLES) & set(env(resources=Resources(cpus=None)))
    own = env(resources=Resources(cpus=4), env={"OMP_NUM_THREADS": "16"})
    assert own["OMP_NUM_THREADS"] == "16" and own["MKL_NUM_THREADS"] == "4"


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("MLEBOARD_RUN_OUTPUT_MAX_BYTES", "64m")
    monkeypatch.setenv("MLEBOARD_MAX_SUBMISSION_BYTES", "1048576")
    monkeypatch.setenv("MLEBOARD_RUN_KILL_GRACE_S", "2.5")
    spec = RunSpec(image="img", command=("x",), competition_id="c")
    assert spec.output_max_bytes == 64 * 1024**2 and spec.submission_max_bytes == 1024**2
    assert spec.kill_grace_s == 2.5 and spec.time_limit_s == 24 * 3600
    monkeypatch.setenv("MLEBOARD_RUN_KILL_GRACE_S", "soon")
    with pytest.raises(ValueError, match="MLEBOARD_RUN_KILL_GRACE_S"):
        RunSpec(image="img", command=("x",), competition_id="c")


def test_the_agent_never_runs_as_root(tmp_path):
    from runner import HarnessError

    spec = RunSpec(image="img", command=("x",), competition_id="c", user="0:0")
    with pytest.raises(HarnessError, match="root"):
        container_kwargs(spec, _dirs(tmp_path))


def test_gpus_and_egress_are_requested_explicitly(tmp_path):
    spec = RunSpec(
        image="img",
        command=("true",),
        competition_id="c",
        resources=Resources(gpus=1, gpu_ids=("3",)),
        network=NetworkPolicy(egress=True, egress_network="agents-egress"),
    )
    kwargs = container_kwargs(spec, _dirs(tmp_path))
    assert kwargs["network_mode"] == "agents-egress"
    (request,) = kwargs["device_requests"]
    assert request["DeviceIDs"] == ["3"] and request["Capabilities"] == [["gpu"]]


def test_engine_timestamps_parse_with_nanoseconds():
    assert parse_docker_time("2024-05-01T12:00:00.123456789Z") == pytest.approx(1714564800.123456)
    assert parse_docker_time("0001-01-01T00:00:00Z") is None
    assert parse_docker_time("2024-05-01T14:00:00.5+02:00") == pytest.approx(1714564800.5)


def test_shipped_agents_load():
    agents = shipped_agents()
    assert {"dummy", "baseline", "aide"} <= set(agents)
    for agent in agents.values():
        assert agent.start and agent.description
        assert (agent.directory / "Dockerfile").read_text().count("FROM ${BASE_IMAGE}") == 1
    assert not agents["dummy"].egress and not agents["baseline"].egress


def test_agents_in_finds_agent_folders_and_a_missing_folder_holds_none(tmp_path):
    assert agents_in(tmp_path / "missing") == {}
    for folder, name in (("a", "first"), ("b", "second")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "agent.yaml").write_text(f"name: {name}\nstart: [x]\n")
        (tmp_path / folder / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    (tmp_path / "notes").mkdir()  # a folder without agent.yaml is not an agent
    agents = agents_in(tmp_path)
    assert sorted(agents) == ["first", "second"]
    assert agents["second"].directory == (tmp_path / "b").resolve()


def test_aide_config_needs_its_endpoint_and_key_and_masks_the_key():
    aide = find_agent("aide")
    assert aide.llm and not aide.egress and not aide.build_network
    assert aide.wheels == "requirements.txt" and "OPENAI_API_KEY" in aide.secret_names
    pins = (aide.directory / "requirements.txt").read_text()
    assert "\naideml==0.1.4\n" in pins
    with pytest.raises(AgentConfigError, match="MLEBOARD_LLM_API_KEY"):
        spec_for_agent(aide, "c", host_env={"MLEBOARD_LLM_BASE_URL": "http://llm.example/v1"})
    host_env = {
        "MLEBOARD_LLM_BASE_URL": "http://llm.example/v1",
        "MLEBOARD_LLM_API_KEY": "sk-secret",
    }
    spec = spec_for_agent(aide, "c", host_env=host_env, seed=2)
    assert not spec.network.egress and spec.seed == 2
    assert spec.llm_base_url == "http://llm.example/v1"
    assert spec.env["OPENAI_BASE_URL"] == "http://llm.example/v1"  # the bridge's in a container
    assert spec.secret_values == ["sk-secret"]
    assert spec.command == ("/opt/aide/bin/python", "run_aide.py")
    driver = (aide.directory / "run_aide.py").read_text()
    for variable in ("AIDE_STEPS", "AIDE_CODE_MODEL", "MLEBOARD_LLM_MODEL", "TIME_LIMIT_SECS"):
        assert variable in driver


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: Bad Name\nstart: [x]\n", "name"),
        ("name: ok\n", "start"),
        ("name: ok\nstart: [x]\negress: yes please\n", "egress"),
        ("name: ok\nstart: [x]\nsurprise: 1\n", "unknown keys"),
        ("name: ok\nstart: [x]\nsecrets: KEY\n", "secrets"),
    ],
)
def test_malformed_agent_yaml_is_refused(tmp_path, text, message):
    (tmp_path / "agent.yaml").write_text(text)
    (tmp_path / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    with pytest.raises(AgentConfigError, match=message):
        load_agent(tmp_path)


def test_image_tags_follow_content(copy_agent):
    folder = copy_agent("dummy")
    agent = load_agent(folder)
    first = agent_image_ref(agent)
    assert first == agent_image_ref(load_agent(folder))
    assert first.startswith("mleboard/agent-dummy:")
    (folder / "main.py").write_text((folder / "main.py").read_text() + "\n# changed\n")
    assert agent_image_ref(load_agent(folder)) != first
    assert base_image_ref().startswith("mleboard/base:")


class _Networks:
    def __init__(self, known: dict[str, dict]):
        self.known = known

    def get(self, name: str):
        import docker.errors

        if name not in self.known:
            raise docker.errors.NotFound(f"network {name} not found")
        return type("Network", (), {"attrs": self.known[name]})()


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (None, "no network 'bridge'"),
        ({"Driver": "null", "IPAM": {"Config": [{}]}}, "driver is 'null'"),
        ({"Driver": "host", "IPAM": {"Config": [{}]}}, "driver is 'host'"),
        ({"Driver": "bridge", "Internal": True, "IPAM": {"Config": [{}]}}, "internal"),
        ({"Driver": "bridge", "IPAM": {"Config": []}}, "no addresses"),
    ],
)
def test_egress_without_a_usable_network_does_not_start(attrs, message):
    from runner import HarnessError
    from runner.docker_backend import check_egress

    client = type("Client", (), {})()
    client.networks = _Networks({} if attrs is None else {"bridge": attrs})
    spec = RunSpec(
        image="i", command=("x",), competition_id="c", network=NetworkPolicy(egress=True)
    )
    with pytest.raises(HarnessError, match=message):
        check_egress(client, spec)
    client.networks = _Networks(
        {"bridge": {"Driver": "bridge", "IPAM": {"Config": [{"Subnet": "172.17.0.0/16"}]}}}
    )
    check_egress(client, spec)  # a usable network: the run may start
    check_egress(type("Client", (), {})(), RunSpec(image="i", command=("x",), competition_id="c"))
