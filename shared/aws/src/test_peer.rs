//! A peer for the adapters' tests: one HTTP exchange on a local port, on its own thread.

use std::io::{Read, Write};

/// Listens on a free local port and answers one request with `answer` (a whole HTTP/1.1
/// response); gives the port's address (`http://127.0.0.1:…`) and the thread, whose result
/// is the request's head as received.
pub(crate) fn one_exchange(answer: String) -> (String, std::thread::JoinHandle<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
    let server = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().expect("a request");
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).expect("read");
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&buf[..n]);
        }
        socket.write_all(answer.as_bytes()).expect("write");
        String::from_utf8_lossy(&request).into_owned()
    });
    (endpoint, server)
}
