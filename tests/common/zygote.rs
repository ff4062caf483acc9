//! The test side of tests/interop/zygote.py: one fork server per (venv, harness script) and
//! test process, started at its first run, so each harness run is a fork of an interpreter
//! that has imported LangGraph already instead of a new one importing it (about 1 s of CPU a
//! run, hundreds of runs a suite). A run is still its own process: its own arguments,
//! environment, working directory, standard output and error, and exit code.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

/// A running fork server.
struct Server {
    socket: PathBuf,
    /// Its socket's directory, removed with it.
    _dir: tempfile::TempDir,
    /// Kept so the process is not reaped early; it exits by itself once this test process
    /// has gone.
    _child: Child,
}

/// What one run left: exit code, standard output, standard error.
pub struct Output {
    /// The exit code the script ended with.
    pub code: i32,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

/// The running servers of this test process, by (Python, script).
type Servers = Mutex<HashMap<(PathBuf, PathBuf), Arc<Server>>>;

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(Default::default)
}

/// The server for `script` under `python`, started if it is not running yet.
fn server(python: &PathBuf, script: &PathBuf) -> Arc<Server> {
    let mut all = servers().lock().unwrap_or_else(|p| p.into_inner());
    let key = (python.clone(), script.clone());
    if let Some(s) = all.get(&key) {
        return s.clone();
    }
    let dir = tempfile::Builder::new()
        .prefix("memctl-zygote")
        .tempdir()
        .expect("temp dir");
    let socket = dir.path().join("s");
    let mut child = Command::new(python)
        .arg(super::root().join("tests/interop/zygote.py"))
        .arg(script)
        .arg(&socket)
        .env("PYTHONHASHSEED", "0")
        .env_remove("LANGGRAPH_AES_KEY")
        .env_remove("MEMCTL_INTEROP_OLD_AES_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("the harness server ({}) starts: {e}", python.display()));
    let mut line = String::new();
    let stdout = child.stdout.take().expect("piped stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the harness server says it is ready");
    assert_eq!(
        line.trim(),
        "ready",
        "the harness server for {} did not start (its errors are above)",
        script.display()
    );
    let s = Arc::new(Server {
        socket,
        _dir: dir,
        _child: child,
    });
    all.insert(key, s.clone());
    s
}

/// Runs `script` under `python` with `args`, this process's environment changed by `env`
/// (`None` removes a variable), in this process's working directory.
pub fn run(
    python: &PathBuf,
    script: &PathBuf,
    args: &[&str],
    env: &[(String, Option<String>)],
) -> Output {
    let server = server(python, script);
    let mut vars: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    for (k, v) in env {
        match v {
            Some(v) => vars.insert(k.clone(), v.clone()),
            None => vars.remove(k),
        };
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let request = serde_json::json!({
        "args": args,
        "env": vars,
        "cwd": std::env::current_dir().expect("working directory"),
        "stdout": out,
        "stderr": err,
    });
    let mut conn = UnixStream::connect(&server.socket).expect("the harness server answers");
    writeln!(conn, "{request}").expect("the request is sent");
    let mut answer = String::new();
    BufReader::new(conn)
        .read_line(&mut answer)
        .expect("the harness run answers");
    let code = answer.trim().parse().unwrap_or_else(|_| {
        panic!(
            "the harness run ended without an exit code: {}",
            std::fs::read_to_string(&err).unwrap_or_default()
        )
    });
    let read =
        |p: &PathBuf| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Output {
        code,
        stdout: read(&out),
        stderr: read(&err),
    }
}
