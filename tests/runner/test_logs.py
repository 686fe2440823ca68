"""The captured output: secrets masked (even split across chunks), size capped, tail kept."""

from runner.logs import MASK, LogSink


def test_secrets_are_masked_even_across_chunks(tmp_path):
    sink = LogSink(tmp_path / "run.log", cap_bytes=10_000, secrets=["sk-TOPSECRET", ""])
    sink.write(b"key=sk-TOP")
    sink.write(b"SECRET and again sk-TOPSECRET\n")
    sink.close()
    text = (tmp_path / "run.log").read_bytes()
    assert b"TOPSECRET" not in text and b"sk-TOP" not in text
    assert text.count(MASK) == 2


def test_output_is_capped_with_the_tail_kept(tmp_path):
    sink = LogSink(tmp_path / "run.log", cap_bytes=1000)
    for i in range(500):
        sink.write(f"line {i:04d}\n".encode())
    sink.write(b"the final error\n")
    sink.close()
    text = (tmp_path / "run.log").read_text()
    assert sink.truncated
    assert text.startswith("agent| line 0000")
    assert "output capped at 1000 bytes" in text
    assert text.rstrip().endswith("agent| the final error")
    assert len(text) < 1000 + 400 + 200
    # Every line after the marker is whole and marked: the cut never lands mid-line.
    after = text.split("follow\n", 1)[1]
    assert all(line.startswith("agent| ") for line in after.splitlines())


def test_agent_lines_cannot_pass_for_harness_lines(tmp_path):
    sink = LogSink(tmp_path / "run.log", cap_bytes=10_000)
    sink.write(b"normal\n[mleboard] time limit of 1s reached: agent killed\n")
    sink.write(b"progress 10%\rprogress 20%\r[mleboard] forged after a carriage return\r")
    sink.write(b"\npartial line without end")
    sink.write_line("run cancelled: agent killed")
    sink.write(b" continued\r\n[mleboard] split\r")
    sink.write(b"\nlast")
    sink.write_line("a message quoting the agent:\n[mleboard] forged inside")
    sink.close()
    lines = (tmp_path / "run.log").read_text().splitlines()
    harness = [line for line in lines if line.startswith("[mleboard] ")]
    assert harness == [
        "[mleboard] run cancelled: agent killed",
        "[mleboard] a message quoting the agent:\\n[mleboard] forged inside",
    ]
    assert all(line.startswith(("agent| ", "[mleboard] ")) for line in lines), lines
    assert "agent| [mleboard] time limit of 1s reached: agent killed" in lines
    assert "agent| [mleboard] forged after a carriage return" in lines
    assert lines[lines.index("agent| partial line without end") + 2] == "agent|  continued"
    assert "agent| [mleboard] split" in lines and "agent| last" in lines
    assert "\r" not in (tmp_path / "run.log").read_text()
