#!/usr/bin/env python3
"""Writes the minigraphs of a small leaf-spine for sonic-cfggen: 2 leaves (ToRRouter) and
2 spines (LeafRouter), all of one HwSku.

Ports are named by their aliases in the SKU's port_config.ini, as minigraphs do (P1..P6 are
the first six): each leaf P1 -> spine1, P2 -> spine2 (point-to-point /31s, eBGP), P3..P6 ->
four servers in VLAN 1000; each spine P1 -> leaf1, P2 -> leaf2. A link names the peer's port
by the peer's alias too (what a SONiC peer advertises in LLDP: lldpmgrd sets the port ID to
the alias). Only what minigraph.py reads to build DEVICE_METADATA, PORT,
DEVICE_NEIGHBOR(_METADATA), INTERFACE, VLAN and BGP_NEIGHBOR; no ACLs, no management network.

usage: make_minigraphs.py HWSKU PORT_CONFIG_INI OUTDIR
"""
import sys

HWSKU, PORT_CONFIG, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
# name lanes alias ...: the aliases of the first six ports, in file order.
ALIAS = [l.split()[2] for l in open(PORT_CONFIG) if l.strip() and not l.startswith("#")][:6]
ASN = {"leaf1": 65101, "leaf2": 65102, "spine1": 65200, "spine2": 65200}
LO = {"leaf1": "10.1.0.1", "leaf2": "10.1.0.2", "spine1": "10.1.0.11", "spine2": "10.1.0.12"}
TYPE = {"leaf1": "ToRRouter", "leaf2": "ToRRouter", "spine1": "LeafRouter", "spine2": "LeafRouter"}
SERVERS = 4


def p2p(leaf, spine):
    """The /31 of a leaf-spine link: spine address even, leaf odd."""
    n = (int(leaf[-1]) - 1) * 2 + (int(spine[-1]) - 1)
    return f"10.0.0.{2 * n}", f"10.0.0.{2 * n + 1}"


def links(host):
    """(local alias, peer, peer port alias or eth0, peer type) of every link of `host`."""
    if host.startswith("leaf"):
        me = int(host[-1]) - 1
        up = [(ALIAS[s - 1], f"spine{s}", ALIAS[me], "LeafRouter") for s in (1, 2)]
        down = [(ALIAS[2 + k], f"{host}-server{k + 1}", "eth0", "Server") for k in range(SERVERS)]
        return up + down
    me = int(host[-1]) - 1
    return [(ALIAS[l - 1], f"leaf{l}", ALIAS[me], "ToRRouter") for l in (1, 2)]


def cpg(host):
    sessions, peers, routers = [], [], []
    for alias, peer, _, ptype in links(host):
        if ptype == "Server":
            continue
        leaf, spine = (host, peer) if host.startswith("leaf") else (peer, host)
        s_ip, l_ip = p2p(leaf, spine)
        mine, theirs = (l_ip, s_ip) if host.startswith("leaf") else (s_ip, l_ip)
        sessions.append(f"""      <BGPSession>
        <MacSec>false</MacSec>
        <StartRouter>{host}</StartRouter>
        <StartPeer>{mine}</StartPeer>
        <EndRouter>{peer}</EndRouter>
        <EndPeer>{theirs}</EndPeer>
        <Multihop>1</Multihop>
        <HoldTime>180</HoldTime>
        <KeepAliveTime>60</KeepAliveTime>
      </BGPSession>""")
        peers.append(f"""          <BGPPeer>
            <Address>{theirs}</Address>
            <RouteMapIn i:nil="true"/>
            <RouteMapOut i:nil="true"/>
            <Vrf i:nil="true"/>
          </BGPPeer>""")
        routers.append(f"""      <a:BGPRouterDeclaration>
        <a:ASN>{ASN[peer]}</a:ASN>
        <a:Hostname>{peer}</a:Hostname>
        <a:RouteMaps/>
      </a:BGPRouterDeclaration>""")
    return f"""  <CpgDec>
    <IsisRouters xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution"/>
    <PeeringSessions>
{chr(10).join(sessions)}
    </PeeringSessions>
    <Routers xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution">
      <a:BGPRouterDeclaration>
        <a:ASN>{ASN[host]}</a:ASN>
        <a:Hostname>{host}</a:Hostname>
        <a:Peers>
{chr(10).join(peers)}
        </a:Peers>
        <a:RouteMaps/>
      </a:BGPRouterDeclaration>
{chr(10).join(routers)}
    </Routers>
  </CpgDec>"""


def dpg(host):
    ips, vlan_members = [], []
    for alias, peer, _, ptype in links(host):
        if ptype == "Server":
            vlan_members.append(alias)
            continue
        leaf, spine = (host, peer) if host.startswith("leaf") else (peer, host)
        s_ip, l_ip = p2p(leaf, spine)
        mine = l_ip if host.startswith("leaf") else s_ip
        ips.append(f"""        <IPInterface>
          <Name i:nil="true"/>
          <AttachTo>{alias}</AttachTo>
          <Prefix>{mine}/31</Prefix>
        </IPInterface>""")
    vlan = ""
    if vlan_members:
        n = host[-1]
        vlan = f"""        <VlanInterface>
          <Name>Vlan1000</Name>
          <AttachTo>{';'.join(vlan_members)}</AttachTo>
          <NoDhcpRelay>true</NoDhcpRelay>
          <VlanID>1000</VlanID>
          <Tag>1000</Tag>
          <Subnets>192.168.{n}.0/24</Subnets>
        </VlanInterface>"""
        ips.append(f"""        <IPInterface>
          <Name i:nil="true"/>
          <AttachTo>Vlan1000</AttachTo>
          <Prefix>192.168.{n}.1/24</Prefix>
        </IPInterface>""")
    return f"""  <DpgDec>
    <DeviceDataPlaneInfo>
      <IPSecTunnels/>
      <LoopbackIPInterfaces xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution">
        <a:LoopbackIPInterface>
          <Name>HostIP</Name>
          <AttachTo>Loopback0</AttachTo>
          <a:Prefix xmlns:b="Microsoft.Search.Autopilot.Evolution">
            <b:IPPrefix>{LO[host]}/32</b:IPPrefix>
          </a:Prefix>
          <a:PrefixStr>{LO[host]}/32</a:PrefixStr>
        </a:LoopbackIPInterface>
      </LoopbackIPInterfaces>
      <ManagementIPInterfaces xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution"/>
      <ManagementVIPInterfaces xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution"/>
      <MplsInterfaces/>
      <MplsTeInterfaces/>
      <RsvpInterfaces/>
      <Hostname>{host}</Hostname>
      <PortChannelInterfaces/>
      <VlanInterfaces>
{vlan}
      </VlanInterfaces>
      <IPInterfaces>
{chr(10).join(ips)}
      </IPInterfaces>
      <DataAcls/>
      <AclInterfaces/>
      <DownstreamSummaries/>
      <DownstreamSummarySet xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution"/>
    </DeviceDataPlaneInfo>
  </DpgDec>"""


def png(host):
    rows, devices, seen = [], [], set()
    for alias, peer, pport, ptype in links(host):
        rows.append(f"""      <DeviceLinkBase>
        <ElementType>DeviceInterfaceLink</ElementType>
        <Bandwidth>100000</Bandwidth>
        <EndDevice>{peer}</EndDevice>
        <EndPort>{pport}</EndPort>
        <StartDevice>{host}</StartDevice>
        <StartPort>{alias}</StartPort>
      </DeviceLinkBase>""")
        if peer not in seen:
            seen.add(peer)
            sku = HWSKU if ptype != "Server" else "Server-100G"
            devices.append(f"""      <Device i:type="{ptype}">
        <Hostname>{peer}</Hostname>
        <HwSku>{sku}</HwSku>
      </Device>""")
    return f"""  <PngDec>
    <DeviceInterfaceLinks>
{chr(10).join(rows)}
    </DeviceInterfaceLinks>
    <Devices>
      <Device i:type="{TYPE[host]}">
        <Hostname>{host}</Hostname>
        <HwSku>{HWSKU}</HwSku>
      </Device>
{chr(10).join(devices)}
    </Devices>
  </PngDec>"""


for host in ASN:
    with open(f"{OUT}/{host}.xml", "w") as f:
        f.write(f"""<DeviceMiniGraph xmlns="Microsoft.Search.Autopilot.Evolution" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">
{cpg(host)}
{dpg(host)}
{png(host)}
  <MetadataDeclaration>
    <Devices xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution"/>
    <Properties xmlns:a="http://schemas.datacontract.org/2004/07/Microsoft.Search.Autopilot.Evolution"/>
  </MetadataDeclaration>
  <Hostname>{host}</Hostname>
  <HwSku>{HWSKU}</HwSku>
</DeviceMiniGraph>
""")
