#!/usr/bin/env python
"""A fork server for the test harnesses: LangGraph imported once, each run a fresh fork.

Every harness run used to be a new interpreter importing LangGraph, langchain_core and the
fixture graphs (about 1 s of CPU each, hundreds of runs a suite). This process imports a
harness script's modules once (its top level: imports and definitions; its `__main__` block
does not run), listens on a Unix socket, and forks for each connection: the child takes the
request (one JSON line: args, env, cwd, the files for stdout and stderr), sets them up as a
new process would have them, runs the script as `__main__` (`runpy`), and answers with its exit
code. Each run is its own process forked from the state right after the imports, so nothing
one run does is seen by another.

    zygote.py SCRIPT SOCKET      (prints "ready" on stdout once it listens)

Started by tests/common/mod.rs (`Harness`) with PYTHONHASHSEED=0 (inherited by the forks, as
the harnesses need it); it exits when the test process that started it has gone.
"""

from __future__ import annotations

import json
import os
import runpy
import select
import signal
import socket
import sys
import traceback


def run_one(conn: socket.socket, script: str) -> None:
    """In the forked child: one harness run, then exit (never returns)."""
    code = 1
    try:
        req = json.loads(conn.makefile("rb").readline())
        # The harness may wait for processes of its own: children are reaped as usual here.
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.argv = [script, *req["args"]]
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - reported as the interpreter would
            traceback.print_exc()
            code = 1
    except BaseException:  # noqa: BLE001 - a request this server could not set up
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        try:
            conn.sendall(f"{code}\n".encode())
        finally:
            os._exit(0)


def main() -> int:
    script, path = os.path.abspath(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, os.path.dirname(script))
    sys.argv = [script]
    runpy.run_path(script, run_name="__zygote__")
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    # Children are reaped by the kernel: this process never waits for them.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    print("ready", flush=True)
    while os.getppid() == parent:
        ready, _, _ = select.select([server], [], [], 1.0)
        if not ready:
            continue
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            run_one(conn, script)
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
