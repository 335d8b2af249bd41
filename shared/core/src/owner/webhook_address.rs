//! Which addresses an outbound webhook may reach. Only `https`; the local runtime also takes
//! `http` to a loopback address, so tests can receive. Outside local mode an address that
//! resolves to a private, loopback, link-local, unique-local, shared (CGNAT), multicast,
//! unspecified or cloud metadata network is refused — checked on each resolution (at creation
//! and at every delivery, by the transport), not only on the URL's text.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::kernel::error::InvalidInput;

/// The rule a deployment applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressPolicy {
    /// The local runtime: `http` to loopback accepted, and no network refused.
    pub local: bool,
}

/// A URL that passed the text checks: where to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub https: bool,
    /// The host as written (a name, or an IP literal without brackets).
    pub host: String,
    pub port: u16,
}

impl Target {
    /// The host as an IP address, when the URL names one.
    pub fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

fn refused(message: impl Into<String>) -> InvalidInput {
    InvalidInput::new("webhook_address_refused", message)
}

impl AddressPolicy {
    /// The URL's own checks: absolute, `https` (or local `http` to loopback), a host, no
    /// credentials, not too long.
    pub fn check_url(&self, url: &str) -> Result<Target, InvalidInput> {
        if url.is_empty() || url.chars().count() > super::outbound_webhook::MAX_URL_CHARS || url.chars().any(|c| c.is_control() || c == ' ')
        {
            return Err(InvalidInput::new(
                "invalid_url",
                "url must be an absolute https URL of at most 2000 characters",
            ));
        }
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| InvalidInput::new("invalid_url", "url must be an absolute https URL"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => return Err(refused("only https URLs are accepted")),
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(InvalidInput::new("invalid_url", "url must not carry a user name or password"));
        }
        let (host, port) = split_host_port(authority)
            .ok_or_else(|| InvalidInput::new("invalid_url", "url must name a host and, if any, a port of 1-65535 in digits"))?;
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'))
        {
            return Err(InvalidInput::new("invalid_url", "url must name a host"));
        }
        let target = Target {
            https,
            port: port.unwrap_or(if https { 443 } else { 80 }),
            host,
        };
        let local_loopback = self.local && is_loopback_host(&target);
        if !(https || local_loopback) {
            return Err(refused("only https URLs are accepted"));
        }
        if let Some(ip) = target.ip() {
            self.check_ip(ip)?;
        }
        Ok(target)
    }

    /// One resolved address of the host.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), InvalidInput> {
        if self.local || !forbidden(ip) {
            Ok(())
        } else {
            Err(refused(
                "the address resolves to a private, loopback, link-local or metadata network",
            ))
        }
    }
}

/// A port as a URL writes it (RFC 3986 `*DIGIT`) that can be delivered to: digits only (no
/// `+`, which `u16::from_str` would take), 1–65535 (port 0 reaches nothing).
fn port(raw: &str) -> Option<u16> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse::<u16>().ok().filter(|p| *p != 0)
}

fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(port(p)?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((host, port));
    }
    match authority.rsplit_once(':') {
        Some((host, raw)) => Some((host, Some(port(raw)?))),
        None => Some((authority, None)),
    }
}

fn is_loopback_host(target: &Target) -> bool {
    target.host == "localhost" || target.ip().is_some_and(|ip| ip.is_loopback())
}

/// Networks no delivery may reach outside local mode.
pub fn forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) // the EC2 metadata address
                || (first == 0x64 && v6.segments()[1] == 0xff9b) // NAT64 of any v4
                || first == 0x2002 // 6to4
                || (first == 0x2001 && v6.segments()[1] == 0) // Teredo
        }
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local() // 169.254/16, the metadata address among them
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: AddressPolicy = AddressPolicy { local: false };
    const LOCAL: AddressPolicy = AddressPolicy { local: true };

    /// Issue 47: a port that can never be delivered to is refused when the URL is given.
    #[test]
    fn a_url_with_an_unusable_port_is_refused() {
        for url in [
            "https://hooks.example.com:0/x",
            "https://hooks.example.com:+9107/x",
            "https://hooks.example.com:-1/x",
            "https://hooks.example.com:65536/x",
            "https://hooks.example.com:84a3/x",
            "https://hooks.example.com:/x",
            "https://[2606:4700::1111]:0/x",
            "https://[2606:4700::1111]:+443/x",
        ] {
            assert_eq!(
                STRICT.check_url(url).map(|_| ()).map_err(|e| e.code),
                Err("invalid_url".to_owned()),
                "{url}"
            );
        }
        assert_eq!(STRICT.check_url("https://hooks.example.com:65535/x").expect("ok").port, 65535);
        assert_eq!(STRICT.check_url("https://[2606:4700::1111]:8443/x").expect("ok").port, 8443);
    }

    #[test]
    fn only_https_and_local_http_to_loopback() {
        assert!(STRICT.check_url("https://hooks.example.com/openloop").is_ok());
        assert_eq!(STRICT.check_url("https://hooks.example.com:8443/x").expect("ok").port, 8443);
        for url in [
            "http://hooks.example.com/",
            "ftp://x/",
            "hooks.example.com",
            "https://user:pw@example.com/",
            "https:///x",
        ] {
            assert!(STRICT.check_url(url).is_err(), "{url}");
        }
        assert!(STRICT.check_url("http://127.0.0.1:9000/").is_err());
        assert!(LOCAL.check_url("http://127.0.0.1:9000/hook").is_ok());
        assert!(LOCAL.check_url("http://[::1]:9000/hook").is_ok());
        assert!(LOCAL.check_url("http://example.com/hook").is_err(), "local http only to loopback");
    }

    #[test]
    fn private_and_metadata_addresses_are_refused_outside_local_mode() {
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "127.0.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "fd00:ec2::254",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(STRICT.check_ip(ip).is_err(), "{ip}");
            assert!(LOCAL.check_ip(ip).is_ok(), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"] {
            assert!(STRICT.check_ip(ip.parse().expect("ip")).is_ok(), "{ip}");
        }
        assert!(STRICT.check_url("https://169.254.169.254/latest/meta-data").is_err());
        assert!(STRICT.check_url("https://[fd00::1]/x").is_err());
    }
}
