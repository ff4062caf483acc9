"""How long a live app waits while memctl erases freed space (rm --purge, forget) beside it,
against one VACUUM, the way memctl erased before (see docs/cron.md, "Freed space and a live app").

A stand-in app commits a small row every 20 ms through Python's sqlite3 with its default 5 s
timeout, as SqliteSaver's connection does; each job runs on a fresh copy of the file whose
free list was first filled by deleting threads without secure_delete (what an app's
delete_thread or an earlier gc leaves). Prints, per job, its wall time and the app's commits,
failures ("database is locked"), longest and p99 commit wait.

    python benches/beside_app.py --db target/bench/db-realistic-seed1.sqlite \\
        --memctl target/release/memctl [--delete-threads 100]
"""
import argparse, json, os, re, shutil, sqlite3, subprocess, sys, tempfile, time

APP = r'''
import json, signal, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1])  # timeout=5.0, Python's default
c.execute("PRAGMA journal_mode=WAL")
c.execute("CREATE TABLE IF NOT EXISTS app_probe (t REAL)")
c.commit()
waits, failures, stop = [], 0, False
def done(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, done)
print("ready", flush=True)
while not stop:
    t0 = time.monotonic()
    try:
        c.execute("INSERT INTO app_probe VALUES (?)", (t0,))
        c.commit()
        waits.append(time.monotonic() - t0)
    except sqlite3.OperationalError:
        failures += 1
        c.rollback()
    time.sleep(0.02)
waits.sort()
print(json.dumps({"commits": len(waits), "failures": failures,
                  "max_s": waits[-1] if waits else None,
                  "p99_s": waits[max(0, int(len(waits) * 0.99) - 1)] if waits else None}))
'''


def prepare(src, work, n):
    base = os.path.join(work, "base.sqlite")
    shutil.copy(src, base)
    c = sqlite3.connect(base)
    c.execute("PRAGMA secure_delete = 0")
    ids = [r[0] for r in c.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]
    for t in ids[:n]:
        c.execute("DELETE FROM writes WHERE thread_id = ?", (t,))
        c.execute("DELETE FROM checkpoints WHERE thread_id = ?", (t,))
    c.commit()
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    free = c.execute("PRAGMA freelist_count").fetchone()[0]
    c.close()
    # A thread to purge from (its first AI message's head as the pattern) and one to forget.
    purge_thread, forget_thread = ids[n], ids[n + 1]
    return base, free, purge_thread, forget_thread


def first_ai_text(memctl, db, thread):
    out = subprocess.run([memctl, "show", "--db", db, thread, "--format", "json"],
                         capture_output=True, check=True).stdout
    for m in json.loads(out)["messages"]:
        if m.get("type") == "ai" and isinstance(m.get("content"), str) and len(m["content"]) > 20:
            return m["content"][:20]
    raise SystemExit(f"no AI text in {thread}")


def vacuum(db):
    c = sqlite3.connect(db, timeout=60)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.execute("VACUUM")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()


def run(job, base, work):
    db = os.path.join(work, "job.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    shutil.copy(base, db)
    os.sync()
    app = subprocess.Popen([sys.executable, "-c", APP, db], stdout=subprocess.PIPE, text=True)
    app.stdout.readline()
    time.sleep(1)
    t0 = time.monotonic()
    note = job(db)
    wall = time.monotonic() - t0
    time.sleep(1)
    app.terminate()
    stats = json.loads(app.communicate()[0].strip().splitlines()[-1])
    return wall, stats, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--delete-threads", type=int, default=100)
    a = ap.parse_args()
    memctl = os.path.abspath(a.memctl)
    work = tempfile.mkdtemp(prefix="memctl-beside-app-")
    try:
        base, free, purge_thread, forget_thread = prepare(a.db, work, a.delete_threads)
        pattern = first_ai_text(memctl, base, purge_thread)

        def memctl_job(*args):
            def job(db):
                out = subprocess.run([memctl, *args, "--db", db, "--settle", "0s"],
                                     capture_output=True, text=True)
                line = (out.stdout + out.stderr).strip().splitlines()
                return f"exit {out.returncode}: " + " / ".join(
                    l.strip()[:110] for l in line if "zeroed" in l or "result" in l or "error" in l)
            return job

        jobs = [
            ("rm --purge (one message)", memctl_job("rm", purge_thread, "--match",
                                                    re.escape(pattern), "--purge")),
            ("forget --thread", memctl_job("forget", "--thread", forget_thread)),
            ("VACUUM (the old way)", lambda db: (vacuum(db), "")[1]),
        ]
        load = os.getloadavg()
        print(f"file {os.path.getsize(base) / 2**20:.0f} MiB, {free} free pages after deleting "
              f"{a.delete_threads} threads without secure_delete; load {load[0]:.1f}")
        print(f"| job | wall | app commits | app failures | app's longest commit | p99 |")
        print(f"|---|---|---|---|---|---|")
        for name, job in jobs:
            wall, st, note = run(job, base, work)
            print(f"| {name} | {wall:.1f} s | {st['commits']} | {st['failures']} | "
                  f"{st['max_s']:.2f} s | {st['p99_s']:.2f} s |")
            if note:
                print(f"|   {note} |||||")
        print(f"load at the end {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
