//! What `fetch` may connect to: HTTPS anywhere, plain HTTP only to a loopback address (a
//! local mirror, the tests), and a redirect that never leaves HTTPS for plain text.

pub use crate::remote::is_loopback;
use reqwest::Url;

/// Most redirects one request follows.
pub const MAX_REDIRECTS: usize = 5;

/// `host` or `host:port` as credentials are keyed (the port only when the URL names one).
pub fn host_key(url: &Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    })
}

/// May `fetch` connect to this URL at all?
pub fn check_url(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(format!(
            "{url}: plain HTTP is refused (only https, or http to a loopback address such as 127.0.0.1)"
        )),
        other => Err(format!(
            "{url}: the `{other}` scheme is not fetched (https only)"
        )),
    }
}

/// May a response at `from` send us to `to`? Never from HTTPS to plain HTTP, and plain HTTP
/// only between loopback addresses.
pub fn check_redirect(from: &Url, to: &Url) -> Result<(), String> {
    if from.scheme() == "https" && to.scheme() != "https" {
        return Err(format!("{from} redirects to {to}, off HTTPS: refused"));
    }
    check_url(to).map_err(|e| format!("{from} redirects to {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn plain_http_only_to_loopback_literals() {
        assert!(check_url(&u("https://charts.example.com/index.yaml")).is_ok());
        assert!(check_url(&u("http://127.0.0.1:8080/index.yaml")).is_ok());
        assert!(check_url(&u("http://127.3.4.5/x")).is_ok());
        assert!(check_url(&u("http://[::1]:5000/v2/")).is_ok());
        assert!(check_url(&u("http://charts.example.com/index.yaml")).is_err());
        assert!(check_url(&u("http://localhost:8080/")).is_err());
        assert!(check_url(&u("http://10.0.0.1/")).is_err());
        assert!(check_url(&u("http://[::ffff:127.0.0.1]/")).is_err());
        assert!(check_url(&u("ftp://127.0.0.1/")).is_err());
        assert!(check_url(&u("file:///etc/passwd")).is_err());
    }

    #[test]
    fn a_redirect_never_leaves_https_for_plain_text() {
        let secure = u("https://charts.example.com/a.tgz");
        assert!(check_redirect(&secure, &u("https://cdn.example.net/a.tgz")).is_ok());
        assert!(check_redirect(&secure, &u("http://127.0.0.1/a.tgz")).is_err());
        assert!(check_redirect(&secure, &u("http://cdn.example.net/a.tgz")).is_err());
        let local = u("http://127.0.0.1:8080/index.yaml");
        assert!(check_redirect(&local, &u("http://127.0.0.1:9090/a.tgz")).is_ok());
        assert!(check_redirect(&local, &u("http://example.com/a.tgz")).is_err());
        assert!(check_redirect(&local, &u("https://example.com/a.tgz")).is_ok());
    }

    #[test]
    fn hosts_are_keyed_with_their_explicit_port() {
        assert_eq!(
            host_key(&u("https://GHCR.io/v2/")).as_deref(),
            Some("ghcr.io")
        );
        assert_eq!(
            host_key(&u("http://127.0.0.1:5000/v2/")).as_deref(),
            Some("127.0.0.1:5000")
        );
        assert_eq!(
            host_key(&u("https://r.example:443/")).as_deref(),
            Some("r.example")
        );
    }
}
