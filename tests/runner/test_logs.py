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
    assert text.startswith("line 0000")
    assert "output capped at 1000 bytes" in text
    assert text.rstrip().endswith("the final error")
    assert len(text) < 1000 + 400 + 200
