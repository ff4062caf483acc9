//! A real HTTP server on 127.0.0.1 that speaks the chat completions protocol, for the
//! summarize tests. It records every request and answers as the test scripts it: normally,
//! slowly, with an error status, with malformed JSON, with a redirect, or not at all (hang).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value as Json};

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request path.
    pub path: String,
    /// Header names (lowercase) and values.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Json,
}

impl Request {
    /// The first user message's content.
    pub fn prompt(&self) -> String {
        self.body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    }

    /// A header value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What to answer.
pub enum Reply {
    /// 200 with this summary text and usage.
    Summary(String),
    /// This status and body.
    Status(u16, String),
    /// 200 with a body that is not JSON.
    Malformed,
    /// Wait this long, then answer with the inner reply.
    Slow(Duration, Box<Reply>),
    /// Never answer (the connection stays open until the test ends).
    Hang,
    /// This redirect status (301, 302, 307, 308) with this `Location`.
    Redirect(u16, String),
}

/// The scripted server. Dropping it stops it.
pub struct ChatServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

type Script = dyn Fn(&Request, usize) -> Reply + Send + Sync;

impl ChatServer {
    /// Starts a server whose answer to the n-th request (0-based) is `script(request, n)`.
    pub fn start(script: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> ChatServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let (reqs, stop2) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            // Bounded: the loop ends when the test drops the server, or after 10 minutes.
            let deadline = std::time::Instant::now() + Duration::from_secs(600);
            while !stop2.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (reqs, script, stop3) = (reqs.clone(), script.clone(), stop2.clone());
                        std::thread::spawn(move || serve(stream, &reqs, script.as_ref(), &stop3));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        ChatServer {
            url,
            requests,
            stop,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().expect("requests").clone()
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(stream: TcpStream, reqs: &Mutex<Vec<Request>>, script: &Script, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            let (k, v) = (k.trim().to_lowercase(), v.trim().to_owned());
            if k == "content-length" {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Request {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Json::Null),
    };
    let n = {
        let mut r = reqs.lock().expect("requests");
        r.push(request.clone());
        r.len() - 1
    };
    let mut reply = script(&request, n);
    let mut stream = stream;
    loop {
        match reply {
            Reply::Slow(d, inner) => {
                std::thread::sleep(d);
                reply = *inner;
            }
            Reply::Hang => {
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return;
            }
            Reply::Summary(text) => {
                let body = json!({
                    "id": format!("chatcmpl-{n}"), "object": "chat.completion", "model": request.body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100 + n, "completion_tokens": 20, "total_tokens": 120 + n},
                });
                respond(&mut stream, 200, &body.to_string());
                return;
            }
            Reply::Status(code, body) => {
                respond(&mut stream, code, &body);
                return;
            }
            Reply::Malformed => {
                respond(&mut stream, 200, "{\"choices\": [oops");
                return;
            }
            Reply::Redirect(code, location) => {
                let _ = write!(
                    stream,
                    "HTTP/1.1 {code} Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.flush();
                return;
            }
        }
    }
}

fn respond(stream: &mut TcpStream, code: u16, body: &str) {
    let reason = match code {
        200 => "OK",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Error",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}
