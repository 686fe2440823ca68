"""A hostile agent: ``ADVERSARY_ATTACK`` (or argv[1]) names the attack; it prints what it
could and could not do as ``RESULT <name> <value>`` lines the tests read."""

import ctypes
import errno
import os
import signal
import socket
import sys
import threading
import time

SUBMISSION_DIR = os.environ.get("SUBMISSION_DIR", "/home/submission")
SUBMISSION = os.path.join(SUBMISSION_DIR, "submission.csv")


def say(name, value):
    print(f"RESULT {name} {value}", flush=True)


def sparse():
    """A 10 GiB submission that takes no space, then wait to be snapshotted."""
    with open(SUBMISSION, "wb") as handle:
        handle.truncate(10 * 1024**3)
    say("sparse", os.stat(SUBMISSION).st_size)
    time.sleep(float(os.environ.get("ADVERSARY_SLEEP", "600")))


def big():
    """A large real (not sparse) submission, rewritten again and again: slow snapshots.
    The first one may be smaller (``ADVERSARY_FIRST_BYTES``), so a snapshot is taken
    however slow the disk is before the large ones."""
    size = int(os.environ.get("ADVERSARY_BIG_BYTES", str(256 * 1024**2)))
    first = int(os.environ.get("ADVERSARY_FIRST_BYTES", str(size)))
    block = os.urandom(1024**2)
    while True:
        with open(SUBMISSION + ".tmp", "wb") as handle:
            for _ in range(max(first, len(block)) // len(block)):
                handle.write(block)
        os.replace(SUBMISSION + ".tmp", SUBMISSION)
        say("written", first)
        first = size


def fill_one(folder, name, limit):
    """Write zeros into folder/name until refused or ``limit`` bytes; the bytes written."""
    written = 0
    block = bytes(1024**2)
    try:
        with open(os.path.join(folder, name), "wb") as handle:
            while written < limit:
                handle.write(block)
                handle.flush()
                written += len(block)
    except OSError as exc:
        say(f"fill_error:{folder}", errno.errorcode.get(exc.errno, exc.errno))
    return written


def fill():
    with open(SUBMISSION, "w") as handle:
        handle.write("id,target\n")
    limit = int(os.environ.get("ADVERSARY_FILL_BYTES", str(3 * 1024**3)))
    for folder in (
        os.environ.get("LOGS_DIR", "/home/logs"),
        os.environ.get("CODE_DIR", "/home/code"),
        SUBMISSION_DIR,
        "/tmp",
        os.environ.get("HOME", "/tmp"),
        "/",
        "/home/agent",
        "/var/tmp",
    ):
        say(f"filled:{folder}", fill_one(folder, "fill.bin", limit))
        # Free the scratch space again so the next folder is measured alone.
        if folder in ("/tmp",):
            try:
                os.unlink(os.path.join(folder, "fill.bin"))
            except OSError:
                pass


def exit137():
    print("exiting with 137", flush=True)
    os._exit(137)


def sigkill():
    print("killing myself", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def forge():
    print("[mleboard] time limit of 1s reached: agent killed", flush=True)
    sys.stdout.write("progress\r[mleboard] run cancelled: agent killed\r\n")
    sys.stdout.write("no newline then [mleboard] harness error: forged")
    sys.stdout.flush()
    sys.stderr.write("\n[mleboard] outputs exceeded their limit (forged)\n")
    sys.stderr.flush()


def sockets():
    families = {
        "AF_UNIX": socket.AF_UNIX,
        "AF_INET": socket.AF_INET,
        "AF_INET6": socket.AF_INET6,
        "AF_NETLINK": socket.AF_NETLINK,
        "AF_VSOCK": 40,
        "AF_PACKET": 17,
        "AF_KEY": 15,
        "AF_BLUETOOTH": 31,
        "AF_ALG": 38,
        "AF_TIPC": 30,
        "AF_RDS": 21,
        "AF_CAN": 29,
        "AF_XDP": 44,
    }
    for name, family in families.items():
        kind = socket.SOCK_DGRAM if name in ("AF_NETLINK", "AF_CAN") else socket.SOCK_STREAM
        if name in ("AF_PACKET", "AF_KEY", "AF_XDP", "AF_CAN"):
            kind = socket.SOCK_RAW
        try:
            socket.socket(family, kind).close()
            say(f"socket:{name}", "ok")
        except OSError as exc:
            say(f"socket:{name}", errno.errorcode.get(exc.errno, exc.errno))
    libc = ctypes.CDLL(None, use_errno=True)
    calls = {
        "unshare_user": lambda: libc.unshare(0x10000000),
        "keyctl": lambda: libc.syscall(250, 0, 0, 0, 0, 0),  # x86_64 keyctl
        "bpf": lambda: libc.syscall(321, 0, 0, 0),
        "userfaultfd": lambda: libc.syscall(323, 0),
        "perf_event_open": lambda: libc.syscall(298, 0, 0, -1, -1, 0),
        "ptrace": lambda: libc.ptrace(16, 1, 0, 0),  # PTRACE_ATTACH to PID 1
        "io_uring_setup": lambda: libc.syscall(425, 1, 0),
        "mount": lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
    }
    for name, call in calls.items():
        ctypes.set_errno(0)
        result = call()
        say(f"syscall:{name}", "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno()))
    # Threads and processes still work (clone3 is refused with ENOSYS: the fallback is clone).
    box = []
    thread = threading.Thread(target=lambda: box.append(1))
    thread.start()
    thread.join()
    say("thread", "ok" if box else "failed")
    say("fork", "ok" if os.system("true") == 0 else "failed")
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(("CapEff", "CapBnd", "CapPrm", "NoNewPrivs", "Seccomp:")):
                say(line.split(":")[0], line.split()[1])
    say("uid", f"{os.getuid()}:{os.getgid()}:{os.getgroups()}")


def kill_pid1():
    targets = [1] + [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    for pid in targets:
        try:
            with open(f"/proc/{pid}/status") as status:
                uid = next(line.split()[1] for line in status if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            say(f"kill:{pid}:uid{uid}", "ok")
        except OSError as exc:
            say(f"kill:{pid}:uid{uid}", errno.errorcode.get(exc.errno, exc.errno))
    time.sleep(2)
    with open(SUBMISSION, "w") as handle:
        handle.write("id,target\n")
    say("alive", "yes")


def sleep():
    print("sleeping", flush=True)
    while True:
        time.sleep(60)


ATTACKS = {
    "sparse": sparse,
    "big": big,
    "fill": fill,
    "exit137": exit137,
    "sigkill": sigkill,
    "forge": forge,
    "sockets": sockets,
    "kill_pid1": kill_pid1,
    "sleep": sleep,
}

if __name__ == "__main__":
    attack = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ADVERSARY_ATTACK", "sleep")
    ATTACKS[attack]()
