//! memctl in a real terminal: a tmux pane whose screen the test reads and types into.
//! tmux must be installed (scripts/test.sh installs it when missing); a missing tmux fails
//! the test, never skips it.

use std::path::Path;
use std::process::Command as Process;
use std::time::{Duration, Instant};

/// A tmux server of its own (its own socket) running one command in a pane; killed on drop.
pub struct Pane {
    socket: String,
    /// The server's configuration file, when it has one ([`Pane::exact`]).
    _config: Option<tempfile::TempDir>,
}

/// How long the screen may take to show what is expected (a slow, shared machine).
pub const PATIENCE: Duration = Duration::from_secs(120);

impl Pane {
    /// Starts `args` (memctl's) in a new pane, on `db`'s copy; the pane shows
    /// `memctl-exit=N` when memctl ends and then waits, so that the screen can be read.
    pub fn run(tag: &str, args: &[&str]) -> Pane {
        Pane::start(tag, args, &[], None)
    }

    /// [`Pane::run`] with variables set in memctl's environment.
    pub fn run_with_env(tag: &str, args: &[&str], env: &[(&str, &str)]) -> Pane {
        Pane::start(tag, args, env, None)
    }

    /// [`Pane::run_with_env`] with memctl's stdout sent to the file `stdout` (stderr stays on
    /// the terminal) when given.
    pub fn start(tag: &str, args: &[&str], env: &[(&str, &str)], stdout: Option<&Path>) -> Pane {
        let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_memctl"))
            .chain(args.iter().copied())
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect();
        let script = format!(
            "env -u MEMCTL_DB -u LANGGRAPH_AES_KEY NO_COLOR=1 {} {}{}; echo memctl-exit=$?; read wait",
            env.iter()
                .map(|(k, v)| format!("{k}='{v}'"))
                .collect::<Vec<_>>()
                .join(" "),
            quoted.join(" "),
            stdout.map_or(String::new(), |p| format!(" > '{}'", p.display()))
        );
        Pane::shell(tag, &script, (200, 50))
    }

    /// Runs the shell `script` in a new pane of `width` x `height` on a tmux server of its
    /// own. The script should end by printing `memctl-exit=$?` and waiting (see
    /// [`Pane::start`]) so that the last screen can be read.
    pub fn shell(tag: &str, script: &str, size: (u16, u16)) -> Pane {
        Pane::server(tag, script, size, None)
    }

    /// [`Pane::shell`] in a pane of exactly `width` x `height` (tmux's status line, which
    /// takes a row of the window, turned off): the size of the terminal the program sees.
    pub fn exact(tag: &str, script: &str, size: (u16, u16)) -> Pane {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::write(dir.path().join("tmux.conf"), "set -g status off\n").expect("write");
        Pane::server(tag, script, size, Some(dir))
    }

    fn server(
        tag: &str,
        script: &str,
        (width, height): (u16, u16),
        config: Option<tempfile::TempDir>,
    ) -> Pane {
        let tmux = Process::new("tmux").arg("-V").output();
        assert!(
            tmux.is_ok_and(|o| o.status.success()),
            "tmux is not installed: apt-get install tmux (scripts/test.sh installs it)"
        );
        let socket = format!("memctl-test-{}-{tag}", std::process::id());
        let (w, h) = (width.to_string(), height.to_string());
        let conf = config.as_ref().map_or("/dev/null".into(), |d| {
            d.path().join("tmux.conf").to_string_lossy().into_owned()
        });
        let status = Process::new("tmux")
            .args(["-L", &socket, "-f", &conf, "new-session", "-d"])
            .args(["-x", &w, "-y", &h, "sh", "-c", script])
            .env_remove("TMUX")
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        Pane {
            socket,
            _config: config,
        }
    }

    /// Runs a tmux command on this pane's server.
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Process::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux runs")
    }

    /// Sends keys (tmux's names: `Enter`, `Escape`, `j`, `C-c`), as a person types them.
    pub fn send(&self, keys: &[&str]) {
        let out = self.tmux(&[&["send-keys"], keys].concat());
        assert!(
            out.status.success(),
            "tmux send-keys {keys:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.send(&["-l", text]);
    }

    /// Sends one key and waits until the screen shows `expect`; returns that screen.
    pub fn key(&self, key: &str, expect: &str) -> String {
        self.send(&[key]);
        self.wait_for(expect)
    }

    /// Resizes the pane's window, as a person resizing the terminal.
    pub fn resize(&self, width: u16, height: u16) {
        let (w, h) = (width.to_string(), height.to_string());
        let out = self.tmux(&["resize-window", "-x", &w, "-y", &h]);
        assert!(out.status.success(), "tmux resize-window failed");
    }

    /// Whether the pane's session still runs.
    pub fn alive(&self) -> bool {
        self.tmux(&["has-session"]).status.success()
    }

    /// The pane's screen now.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-J"]).stdout).into_owned()
    }

    /// Polls the screen until it shows `text` (bounded by [`PATIENCE`]); returns it.
    pub fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "the terminal never showed {text:?}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` and Enter.
    pub fn answer(&self, keys: &str) {
        self.type_text(keys);
        self.send(&["Enter"]);
    }

    /// Waits for memctl to end; returns its exit code and the screen.
    pub fn exit(&self) -> (i32, String) {
        let screen = self.wait_for("memctl-exit=");
        let code = screen
            .lines()
            .find_map(|l| l.trim().strip_prefix("memctl-exit="))
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("no exit code on the screen:\n{screen}"));
        (code, screen)
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

impl Pane {
    /// Sends Ctrl-C (SIGINT to the foreground process, as a person's key press does).
    pub fn interrupt(&self) {
        self.send(&["C-c"]);
    }
}
