//! The Host and Origin checks, in front of every route.
//!
//! DNS rebinding: a page on `evil.example` re-points its own name at 127.0.0.1 and so
//! reaches a local server same-origin; the browser then sends `Host: evil.example:PORT`.
//! So the Host must be `localhost` or an IP literal, with this server's port (names that
//! an attacker controls are refused; an IP literal cannot be re-pointed).
//! Cross-site requests: a page elsewhere can POST to 127.0.0.1 (a "simple" request needs
//! no CORS preflight), and the browser then says where it came from in `Origin` (and
//! `Sec-Fetch-Site: cross-site`). So an `Origin`, when present, must be this server,
//! `http://` + the Host; and `Sec-Fetch-Site`, when present, must not be `cross-site`.
//! Requests without those headers (curl, scripts) come from this machine's own programs.
//!
//! Sources: the WHATWG Fetch standard (the `Origin` header, `Sec-Fetch-Site` in W3C Fetch
//! Metadata Request Headers); the DNS-rebinding defence of validating Host as in the
//! Jupyter server's `allow_remote_access` check.
//!
//! Left out: authentication (serve binds to 127.0.0.1 unless told otherwise, with a
//! warning), TLS.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Whether `host` (a Host header, `name:port`) names this server on `port`.
pub fn host_ok(host: &str, port: u16) -> bool {
    let Some((name, p)) = host.rsplit_once(':') else {
        return false;
    };
    if p.parse::<u16>() != Ok(port) {
        return false;
    }
    let name = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

/// The reason to refuse a request with these headers, if any.
pub fn refusal(h: &HeaderMap, port: u16) -> Option<String> {
    let host = h.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !host_ok(host, port) {
        return Some(format!("Host `{host}`: expected localhost:{port} or an IP address with port {port} (a guard against DNS rebinding)"));
    }
    if let Some(o) = h.get(header::ORIGIN) {
        let o = o.to_str().unwrap_or("");
        if o != format!("http://{host}") {
            return Some(format!("Origin `{o}`: expected http://{host}; requests from other sites are refused"));
        }
    }
    if h.get("sec-fetch-site").and_then(|v| v.to_str().ok()) == Some("cross-site") {
        return Some("Sec-Fetch-Site: cross-site: requests from other sites are refused".into());
    }
    None
}

/// The middleware: 403 with the reason, or the route.
pub async fn check(State(s): State<crate::State>, req: Request, next: Next) -> Response {
    match refusal(req.headers(), s.port) {
        Some(msg) => ApiError { status: StatusCode::FORBIDDEN, msg }.into_response(),
        None => next.run(req).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for ok in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "192.168.1.2:8080"] {
            assert!(host_ok(ok, 8080), "{ok}");
        }
        for bad in ["", "127.0.0.1", "127.0.0.1:80", "evil.example:8080", "localhost.evil.example:8080", "127.0.0.1.nip.io:8080", "[::1]:80"] {
            assert!(!host_ok(bad, 8080), "{bad}");
        }
    }
}
