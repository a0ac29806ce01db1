//! The classes RoCE and CNPs travel in: the DSCP → TC → PG → queue chain on each lossless
//! port, PFC priorities on both ends of a link and between a switch and its NICs, and the
//! port MTU a RoCE packet needs.

use super::*;

/// The map a port uses: its own `PORT_QOS_MAP|port|field`, else `PORT_QOS_MAP|global|field`.
pub(super) fn port_map<'a>(sw: &'a Switch, port: &str, field: &str) -> Option<(&'a str, Place)> {
    for key in [port, "global"] {
        if let Some(v) = sw.field("PORT_QOS_MAP", key, field) {
            return Some((v, sw.place("PORT_QOS_MAP", key, field)));
        }
    }
    None
}

/// One step of the chain: the value `TABLE|map|from`, parsed, or a finding.
pub(super) enum Step {
    To(u32),
    /// The map has no entry for the value (the ASIC default, 0, applies).
    Missing,
    /// The port's map is absent or undefined (already reported).
    Broken,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn map_step(
    sw: &Switch,
    port: &str,
    qos_field: &str,
    table: &'static str,
    from: u32,
    what_from: &str,
    found: &mut Vec<Finding>,
) -> Result<Step, ReadError> {
    let f = |severity, place, what: String, failure: &str, fix: String| Finding {
        severity,
        id: "dscp-chain",
        switch: sw.name().to_string(),
        place,
        ports: vec![port.to_string()],
        what,
        failure: failure.to_string(),
        fix,
    };
    let Some((name, qplace)) = port_map(sw, port, qos_field) else {
        found.push(f(
            Severity::Error,
            sw.place("PORT_QOS_MAP", port, qos_field),
            format!("lossless port has no {qos_field}, so {what_from} {from} follows the ASIC default"),
            "RoCE traffic may leave the lossless class: drops under congestion",
            format!("set PORT_QOS_MAP|{port}|{qos_field} to the {table} map of the other lossless ports"),
        ));
        return Ok(Step::Broken);
    };
    let Some(entries) = sw.table(table).and_then(|t| t.get(name)) else {
        found.push(f(
            Severity::Error,
            qplace,
            format!("names {table} map {name:?}, which no file of this switch defines"),
            "orchagent cannot bind the map: the port keeps the ASIC default mapping and RoCE traffic may be lossy",
            format!("define {table}|{name} or name an existing map"),
        ));
        return Ok(Step::Broken);
    };
    let key = from.to_string();
    let Some(v) = entries.fields.get(&key) else {
        return Ok(Step::Missing);
    };
    let to: u32 = v.trim().parse().map_err(|_| shape(sw.place(table, name, &key), format!("{v:?} is not a whole number")))?;
    Ok(Step::To(to))
}

/// (a) The RoCE DSCP's TC, PG and queue must be lossless; CNPs must not share a paused class.
pub(super) fn dscp_chain(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    for t in ["DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP"] {
        if sw.table(t).is_none() {
            not(nc, sw, "dscp-chain", t, "the RoCE DSCP's path to a lossless PG and queue is unknown");
            return Ok(());
        }
    }
    let name_of = |port: &str, f: &str| port_map(sw, port, f).map(|(n, _)| n.to_string()).unwrap_or_default();
    for (port, pfc) in lossless {
        let lossless_tc = *pfc.iter().next().expect("lossless ports have a priority");
        let err = |place: Place, what: String, failure: &str, fix: String| Finding {
            severity: Severity::Error,
            id: "dscp-chain",
            switch: sw.name().to_string(),
            place,
            ports: vec![port.clone()],
            what,
            failure: failure.to_string(),
            fix,
        };
        let d = u32::from(opts.roce_dscp);
        let dmap = name_of(port, "dscp_to_tc_map");
        let tc = match map_step(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", d, "DSCP", found)? {
            Step::Broken => continue,
            Step::Missing => {
                found.push(err(
                    sw.place("DSCP_TO_TC_MAP", &dmap, &d.to_string()),
                    format!("RoCE DSCP {d} has no entry, so it lands in TC 0, not in pfc_enable {{{}}}", fmt_set(pfc)),
                    "RoCE packets travel in a lossy class: dropped under congestion, and go-back-N retransmission collapses throughput",
                    format!("DSCP_TO_TC_MAP|{dmap}|{d} = \"{lossless_tc}\""),
                ));
                continue;
            }
            Step::To(tc) => tc,
        };
        if !pfc.contains(&tc) {
            found.push(err(
                sw.place("DSCP_TO_TC_MAP", &dmap, &d.to_string()),
                format!("RoCE DSCP {d} maps to TC {tc}, which is not in pfc_enable {{{}}}", fmt_set(pfc)),
                "RoCE packets travel in a lossy class: dropped under congestion, and go-back-N retransmission collapses throughput",
                format!("DSCP_TO_TC_MAP|{dmap}|{d} = \"{lossless_tc}\""),
            ));
            continue;
        }
        for (field, table, what, failure) in [
            (
                "tc_to_pg_map",
                "TC_TO_PRIORITY_GROUP_MAP",
                "priority group",
                "RoCE packets are admitted to a PG without lossless headroom and XOFF: ingress drops once the buffer fills",
            ),
            (
                "tc_to_queue_map",
                "TC_TO_QUEUE_MAP",
                "queue",
                "RoCE packets wait in a queue the peer's PFC frames do not pause and egress admission treats as lossy: drops, and pauses that stop the wrong queue",
            ),
        ] {
            let map = name_of(port, field);
            let (to, got) = match map_step(sw, port, field, table, tc, "TC", found)? {
                Step::Broken => break,
                Step::Missing => (0, "has no entry (default 0)".to_string()),
                Step::To(t) => (t, format!("maps to {what} {t}")),
            };
            if !pfc.contains(&to) {
                found.push(err(
                    sw.place(table, &map, &tc.to_string()),
                    format!("the RoCE TC {tc} {got}, which is not in pfc_enable {{{}}}", fmt_set(pfc)),
                    failure,
                    format!("{table}|{map}|{tc} = \"{tc}\""),
                ));
                break;
            }
        }
        cnp_class(sw, port, pfc, &dmap, opts, found)?;
    }
    Ok(())
}

/// (a, CNPs) The CNP DSCP on `port` must not land in a paused (lossless) class, nor
/// unmapped in TC 0 with bulk traffic: a warning at its DSCP_TO_TC_MAP entry (`dmap`).
fn cnp_class(sw: &Switch, port: &str, pfc: &BTreeSet<u32>, dmap: &str, opts: &Options, found: &mut Vec<Finding>) -> Result<(), ReadError> {
    let c = u32::from(opts.cnp_dscp);
    let cnp = map_step(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", c, "DSCP", &mut vec![])?;
    if !matches!(cnp, Step::Broken) {
        let free_tc = if !pfc.contains(&6) { 6 } else { (0..8).rev().find(|t| !pfc.contains(t)).unwrap_or(0) };
        let warn = |what: String, failure: &str| Finding {
            severity: Severity::Warning,
            id: "cnp-class",
            switch: sw.name().to_string(),
            place: sw.place("DSCP_TO_TC_MAP", dmap, &c.to_string()),
            ports: vec![port.to_string()],
            what,
            failure: failure.to_string(),
            fix: format!(
                "DSCP_TO_TC_MAP|{dmap}|{c} = \"{free_tc}\" (a class outside pfc_enable; NVIDIA's default CNP priority is 6) with a strict-priority scheduler"
            ),
        };
        match cnp {
            Step::Missing => found.push(warn(
                format!("CNP DSCP {c} has no entry, so CNPs land in TC 0 with bulk traffic"),
                "CNPs queue behind best-effort traffic: DCQCN senders slow down late, queues reach the PFC point and pause",
            )),
            Step::To(ctc) if pfc.contains(&ctc) => found.push(warn(
                format!("CNP DSCP {c} maps to TC {ctc}, a lossless (paused) class"),
                "CNPs stop whenever that class is paused, exactly when the sender must slow down: congestion control starves and pauses spread",
            )),
            Step::To(_) | Step::Broken => {}
        }
    }
    Ok(())
}

/// (b) Both ends of a link between two given switches must agree on `pfc_enable`. The
/// peer's port in DEVICE_NEIGHBOR is its PORT key or its alias ([`Switch::port_key`]); a
/// peer port found in neither is "not checked", never read as PFC off.
pub(super) fn pfc_peers(switches: &[Switch], found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    let pfc_of = |sw: &Switch, port: &str| -> Result<BTreeSet<u32>, ReadError> {
        match sw.field("PORT_QOS_MAP", port, "pfc_enable") {
            Some(v) => parse_list(v).ok_or_else(|| shape(sw.place("PORT_QOS_MAP", port, "pfc_enable"), format!("{v:?} is not a list of priorities"))),
            None => Ok(BTreeSet::new()),
        }
    };
    for sw in switches {
        let (Some(me), Some(nb)) = (&sw.hostname, sw.table("DEVICE_NEIGHBOR")) else { continue };
        if sw.table("PORT_QOS_MAP").is_none() {
            continue;
        }
        for (port, e) in nb {
            let (Some(peer_name), Some(peer_given)) = (e.fields.get("name"), e.fields.get("port")) else { continue };
            let Some(peer) = switches.iter().find(|s| s.hostname.as_ref() == Some(peer_name)) else { continue };
            if peer.table("PORT_QOS_MAP").is_none() {
                continue;
            }
            let Some(peer_port) = peer.port_key(peer_given) else {
                not(
                    nc,
                    sw,
                    "pfc-peer-mismatch",
                    "(peer port)",
                    &format!("DEVICE_NEIGHBOR|{port}|port names {peer_given:?} on {peer_name}, which is neither a PORT key nor an alias there"),
                );
                continue;
            };
            if (peer_name.as_str(), peer_port) < (me.as_str(), port.as_str()) {
                continue; // the peer reports the link
            }
            let (mine, theirs) = (pfc_of(sw, port)?, pfc_of(peer, peer_port)?);
            if mine == theirs {
                continue;
            }
            let union: BTreeSet<u32> = mine.union(&theirs).copied().collect();
            let peer_place = peer.place("PORT_QOS_MAP", peer_port, "pfc_enable");
            found.push(Finding {
                severity: Severity::Error,
                id: "pfc-peer-mismatch",
                switch: me.clone(),
                place: sw.place("PORT_QOS_MAP", port, "pfc_enable"),
                ports: vec![port.clone()],
                what: format!("pfc_enable {{{}}} here, {{{}}} on the link peer {peer_name} {peer_port} ({peer_place})", fmt_set(&mine), fmt_set(&theirs)),
                failure:
                    "a priority lossless on one end only: that end's PFC frames are ignored by the other, so its headroom overflows and lossless packets drop"
                        .into(),
                fix: format!("pfc_enable \"{}\" on both ends", fmt_set(&union)),
            });
        }
    }
    Ok(())
}

/// (e) A lossless port's IP MTU must hold a full RoCE packet: path MTU + 64 B.
pub(super) fn port_mtu(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    let Some(ports) = sw.table("PORT") else {
        not(nc, sw, "port-mtu", "PORT", "port MTUs unknown");
        return Ok(());
    };
    let need = opts.path_mtu.0 + ROCE_IP_OVERHEAD;
    for port in lossless.keys() {
        let Some(e) = ports.get(port) else { continue };
        let mtu = match e.fields.get("mtu") {
            Some(v) => num(sw, "PORT", port, "mtu", v)?,
            None => DEFAULT_PORT_MTU.0,
        };
        if mtu < need {
            found.push(Finding {
                severity: Severity::Error,
                id: "port-mtu",
                switch: sw.name().to_string(),
                place: sw.place("PORT", port, "mtu"),
                ports: vec![port.clone()],
                what: format!(
                    "IP MTU {mtu} B is below the RoCE path MTU {} B + {ROCE_IP_OVERHEAD} B of IPv4/UDP/BTH/RETH/ImmDt/ICRC = {need} B",
                    opts.path_mtu.0
                ),
                failure: "full-size RoCE packets are dropped at this port: transfers stall in retransmission until the QP fails".into(),
                fix: format!("PORT|{port}|mtu >= \"{need}\" (SONiC's default is \"9100\")"),
            });
        }
    }
    Ok(())
}

/// The NIC on `nic.port` against the switch: PFC priorities equal on both ends, DSCP trust
/// when the switch classifies by DSCP, the NIC's RoCE and CNP DSCPs through the switch's
/// maps ([`dscp_chain`] with the NIC's values: a RoCE DSCP outside the lossless class is a
/// `dscp-chain` error at the switch's map entry, a CNP DSCP in a paused class a `cnp-class`
/// warning), the CNP priority outside `pfc_enable`, and DCQCN enabled on the RoCE priority.
/// NIC-side findings are placed in the NIC file, at the field.
pub(super) fn nic_checks(sw: &Switch, file: &str, nic: &NicConfig, opts: &Options, found: &mut Vec<Finding>) -> Result<(), ReadError> {
    let port = nic.port.as_str();
    let switch_pfc = match sw.field("PORT_QOS_MAP", port, "pfc_enable") {
        Some(v) => parse_list(v).ok_or_else(|| shape(sw.place("PORT_QOS_MAP", port, "pfc_enable"), format!("{v:?} is not a list of priorities")))?,
        None => BTreeSet::new(),
    };
    let at = |field: &str| Place { file: file.to_string(), path: field.to_string() };
    let list = |s: &BTreeSet<u32>| format!("[{}]", s.iter().map(u32::to_string).collect::<Vec<_>>().join(", "));
    let mut push = |severity, id, place, what: String, failure: &str, fix: String| {
        found.push(Finding { severity, id, switch: sw.name().to_string(), place, ports: vec![port.to_string()], what, failure: failure.into(), fix })
    };
    if let Some(pfc) = nic.pfc.as_ref().filter(|p| **p != switch_pfc) {
        push(
            Severity::Error,
            "nic-pfc-mismatch",
            at("pfc"),
            format!("the NIC pauses and honours PFC on {{{}}}, the switch port on pfc_enable {{{}}}", fmt_set(pfc), fmt_set(&switch_pfc)),
            "a priority lossless on one end only: the switch drops what the NIC expects it to pause for, or the NIC ignores the switch's pause frames and the switch's headroom overflows",
            format!("pfc = {} (mlnx_qos -i <if> --pfc with 1 at those priorities), the switch's pfc_enable", list(&switch_pfc)),
        );
    }
    if nic.trust == Some(Trust::Pcp) && port_map(sw, port, "dscp_to_tc_map").is_some() {
        push(
            Severity::Error,
            "nic-trust",
            at("trust"),
            "the NIC trusts PCP while the switch port classifies by DSCP (dscp_to_tc_map)".into(),
            "the NIC queues and pauses RoCE by VLAN priority, which an untagged RoCEv2 packet does not carry: RoCE leaves the NIC in priority 0, not the lossless one",
            "trust = \"dscp\" (mlnx_qos -i <if> --trust dscp)".into(),
        );
    }
    if let Some(c) = nic.cnp_priority.filter(|c| switch_pfc.contains(c)) {
        let free = (0..8).rev().find(|p| !switch_pfc.contains(p)).unwrap_or(0);
        push(
            Severity::Warning,
            "nic-cnp-priority",
            at("cnp_priority"),
            format!("the NIC sends CNPs on priority {c}, which the switch port pauses (pfc_enable {{{}}})", fmt_set(&switch_pfc)),
            "CNPs wait behind the pause exactly when the sender must slow down: congestion control starves and pauses spread",
            format!("cnp_priority = {free} (a priority outside pfc_enable; /sys/class/net/<if>/ecn/roce_np/cnp_802p_prio)"),
        );
    }
    let roce_prio = nic.roce_priority.or_else(|| nic.pfc.as_ref().and_then(|p| p.iter().next().copied()));
    for (field, set, role) in [("ecn_rp", &nic.ecn_rp, "reaction point (rate control)"), ("ecn_np", &nic.ecn_np, "notification point (CNPs)")] {
        let (Some(set), Some(p)) = (set, roce_prio) else { continue };
        if !set.contains(&p) {
            let mut with = set.clone();
            with.insert(p);
            push(
                Severity::Warning,
                "nic-dcqcn-off",
                at(field),
                format!("DCQCN's {role} is off on the RoCE priority {p} (enabled on {{{}}})", fmt_set(set)),
                "ECN marks on RoCE are ignored: senders never slow down and PFC becomes the only brake",
                format!("{field} = {} (echo 1 > /sys/class/net/<if>/ecn/{}/enable/{p})", list(&with), if field == "ecn_rp" { "roce_rp" } else { "roce_np" }),
            );
        }
    }
    // The NIC's DSCPs through the switch's maps, for its port only.
    if (nic.roce_dscp.is_some() || nic.cnp_dscp.is_some()) && !switch_pfc.is_empty() {
        let o = Options { roce_dscp: nic.roce_dscp.unwrap_or(opts.roce_dscp), cnp_dscp: nic.cnp_dscp.unwrap_or(opts.cnp_dscp), ..*opts };
        let one = BTreeMap::from([(port.to_string(), switch_pfc.clone())]);
        let mut mine = vec![];
        // A missing map table is already "not checked" for the switch.
        dscp_chain(sw, &one, &o, &mut mine, &mut vec![])?;
        for mut f in mine {
            f.what = format!("{file} (NIC on {port}): {}", f.what);
            found.push(f);
        }
    }
    Ok(())
}
