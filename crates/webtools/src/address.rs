//! Which addresses `web_fetch` may connect to, and which hosts the user
//! opened to private ones.
//!
//! Guarantees: an address is public only when it is none of loopback,
//! unspecified, private (RFC 1918), carrier-grade NAT (100.64/10, which
//! also holds some clouds' metadata services), link-local (169.254/16,
//! the common metadata address, and fe80::/10), unique-local (fc00::/7),
//! multicast, broadcast, documentation, benchmarking or reserved ranges.
//! An IPv6 address that carries an IPv4 one (mapped, compatible, NAT64,
//! 6to4) is judged by the IPv4 address it carries, so `::ffff:127.0.0.1`
//! is loopback.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public, for the message; `None` when it is.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        _ if ip.is_loopback() => "loopback",
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_broadcast() => "broadcast",
        _ if ip.is_private() => "private",
        _ if ip.is_link_local() => "link-local (cloud metadata services live here)",
        _ if ip.is_multicast() => "multicast",
        (0, _, _) => "the 'this network' range",
        (100, 64..=127, _) => "carrier-grade NAT (shared address space)",
        (192, 0, 0) => "IETF protocol assignments",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (240..=255, _, _) => "reserved",
        _ => return None,
    };
    Some(reason)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return non_public_v4(v4);
    }
    let first = ip.segments()[0];
    let reason = match first {
        _ if ip.is_loopback() => "loopback",
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_multicast() => "multicast",
        _ if first & 0xfe00 == 0xfc00 => "unique-local (private)",
        _ if first & 0xffc0 == 0xfe80 => "link-local",
        _ if first & 0xffc0 == 0xfec0 => "site-local (deprecated private)",
        0x2001 if ip.segments()[1] == 0x0db8 => "documentation",
        _ => return None,
    };
    Some(reason)
}

/// The IPv4 address an IPv6 one stands for, where it stands for one:
/// IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64
/// (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..5] == [0; 5] && (s[5] == 0xffff || (s[5] == 0 && (s[6] != 0 || s[7] > 1))) {
        return Some(tail());
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail());
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}

/// Where `web_fetch` may connect: public addresses always; private ones
/// only when the user's config says so, for every host or for the hosts
/// it names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Every host may be at a private address (`[web] allow_private`).
    pub allow_private: bool,
    /// These hosts may be at a private address (`[web] private_hosts`):
    /// names as written in URLs (`localhost`, `dev.internal`) or IP
    /// literals (`127.0.0.1`, `::1`), compared without case.
    pub private_hosts: Vec<String>,
}

impl AddressPolicy {
    /// Whether `host` (a name, or an IP literal without brackets) may be at
    /// a private address.
    pub fn opens(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_private
            || self.private_hosts.iter().any(|allowed| {
                let allowed = allowed.trim().trim_start_matches('[').trim_end_matches(']');
                allowed.eq_ignore_ascii_case(host)
            })
    }

    /// `None` when `host` may be reached at `ip`, else why not, worded for
    /// the model and the user (with the setting that would allow it).
    pub fn refusal(&self, host: &str, ip: IpAddr) -> Option<String> {
        let reason = non_public(ip)?;
        if self.opens(host) {
            return None;
        }
        Some(format!(
            "Refused: {host} is at {ip}, a {reason} address, and web_fetch reaches only public \
             addresses (a page must not reach this machine, the local network or a cloud \
             metadata service). If you mean to reach it, the user can add \"{host}\" to \
             `private_hosts` (or set `allow_private = true`) under `[web]` in their own config \
             file."
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn private_and_special_ranges_are_not_public() {
        for text in [
            "127.0.0.1",
            "127.255.0.9",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.5.4",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:c0a8:0101::1",
            "2001:db8::1",
        ] {
            assert!(non_public(ip(text)).is_some(), "{text} taken for public");
        }
    }

    #[test]
    fn public_addresses_are_public() {
        for text in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "2002:0808:0808::1",
        ] {
            assert_eq!(non_public(ip(text)), None, "{text}");
        }
    }

    #[test]
    fn the_policy_opens_named_hosts_only() {
        let policy = AddressPolicy {
            allow_private: false,
            private_hosts: vec!["LocalHost".into(), "[::1]".into()],
        };
        assert!(policy.refusal("localhost", ip("127.0.0.1")).is_none());
        assert!(policy.refusal("::1", ip("::1")).is_none());
        assert!(policy.refusal("[::1]", ip("::1")).is_none());
        let refusal = policy.refusal("evil.test", ip("127.0.0.1")).unwrap();
        assert!(refusal.contains("loopback") && refusal.contains("private_hosts"), "{refusal}");
        assert!(policy.refusal("evil.test", ip("8.8.8.8")).is_none());
        let open = AddressPolicy { allow_private: true, private_hosts: Vec::new() };
        assert!(open.refusal("anything", ip("10.0.0.1")).is_none());
    }
}
