"""``hosts { }``: node addresses (literal or ``env("NAME")``), the network interface and the port
bases reach every script; what cannot describe the deployment is SN2040, and two listeners on one
port of a node SN4043 (docs/design.md §2.4)."""

from __future__ import annotations

import json
import re

import pytest

from expect import ROOT, compile_text, deployment_of, outputs_of, role_yaml

PLAN = (ROOT / "tests" / "golden" / "vllm-ascend-qwen3-a2-hosts" / "plan.sn").read_text()
#: the plan's hosts block as written (canonical `sncc fmt` layout: one key per line)
HOSTS = re.search(r"hosts \{\n.*?\n  \}", PLAN, re.S).group(0)
#: the 1-based line where the hosts block starts (a one-line replacement is reported there)
HOSTS_LINE = PLAN[:PLAN.index(HOSTS)].count("\n") + 1
assert 'addresses = ["10.0.0.1", env("NODE1_IP")]' in HOSTS and "dp_rpc_port = 14000" in HOSTS


def with_hosts(hosts: str, text: str = PLAN) -> str:
    return text.replace(HOSTS, hosts)


def errors(text: str) -> list[tuple[str, str, int, int]]:
    comp = compile_text(text)
    return [(d.code.code, d.message, *comp.source.line_col(d.span.start)) for d in comp.diagnostics if d.is_error]


def test_addresses_nic_and_ports_reach_the_scripts():
    files = outputs_of(PLAN)
    common = files["env/common.sh"]
    assert 'NODE_0_IP="${NODE_0_IP:-10.0.0.1}"' in common and 'NODE_1_IP="${NODE_1_IP:-${NODE1_IP:-}}"' in common
    head, follower = files["launch/serve-0-node0.sh"], files["launch/serve-0-node1.sh"]
    assert "Needs: nothing." in head and "Needs: NODE1_IP." in follower and "SNCC_NIC" not in head + follower
    assert "--port 8100" in head and "--data-parallel-rpc-port 14000" in head + follower
    assert '--data-parallel-address "${NODE_0_IP}"' in follower and "--headless" in follower
    for name in ("env/serve-0-node0.sh", "env/serve-0-node1.sh"):
        for var in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME"):
            assert f"export {var}=enp189s0f0" in files[name], (name, var)
    assert '"http://${NODE_0_IP}:8100"' in files["bench.sh"]


def test_without_hosts_the_scripts_take_every_address_and_the_nic_from_their_caller():
    files = outputs_of(with_hosts(""))
    assert "NODE_0_IP=" not in files["env/common.sh"]
    head = files["launch/serve-0-node0.sh"]
    assert "Needs: NODE_0_IP, SNCC_NIC." in head and "--port 8000" in head and "--data-parallel-rpc-port 13345" in head
    assert 'export GLOO_SOCKET_IFNAME="${SNCC_NIC}"' in files["env/serve-0-node1.sh"]


def test_nvidia_multi_node_exports_nccl_and_gloo_interfaces():
    text = ('plan "llama-2x-h100" {\n'
            '  model "llama-3.1-70b" { weights = "/data/models/Llama-3.1-70B-Instruct"  quant = bf16 }\n'
            '  hardware { system = "hgx-h100"  nodes = 2 }\n  engine "vllm" { version = "0.23.0" }\n'
            '  serve { devices = 16  tp = 8  dp = 2  max_num_seqs = 32  max_num_batched_tokens = 8k  chunked_prefill = 8k }\n'
            '  hosts { nic = "ens1f0" }\n'
            '  workload { requests = 100  concurrency = 16  input { mean = 2k  max = 8k }  output { mean = 512  max = 2k } }\n}\n')
    env = outputs_of(text)["env/serve-0-node1.sh"]
    assert "export NCCL_SOCKET_IFNAME=ens1f0" in env and "export GLOO_SOCKET_IFNAME=ens1f0" in env
    assert "HCCL" not in env and "TP_SOCKET_IFNAME" not in env


def test_a_written_kv_port_is_the_base_and_a_default_one_follows_the_connector():
    pd = (ROOT / "tests" / "golden" / "vllm-ascend-v4flash-pd" / "plan.sn").read_text()
    dep = deployment_of(pd)
    assert min(i.kv_port for r in dep.roles for i in r.instances) == 36000   # Mooncake, 16 NPUs per node
    dep = deployment_of(pd.replace("  env {", "  hosts { kv_port = 40000  proxy_port = 9100 }\n  env {"))
    bases = sorted(i.kv_port for r in dep.roles for i in r.instances)
    assert bases == [40000, 40016, 40032] and dep.proxy.port == 9100
    cfg = json.loads(json.dumps([a.value for p in dep.processes for a in p.flags if a.name == "kv-transfer-config"][0]))
    assert cfg["kv_port"] == 40000


@pytest.mark.parametrize("hosts, message, col", [
    ('hosts { addresses = ["10.0.0.1"] }', "names 1 node, and the deployment uses 2", 23),
    ('hosts { addresses = ["10.0.0.1", "10.0.0.1"] }', "gives `10.0.0.1` to node 0 and node 1", 23),
    # a spare address past the used nodes is checked too: a repeated one is a typo waiting for a scale-up
    ('hosts { addresses = ["10.0.0.1", "10.0.0.2", "10.0.0.1"] }', "gives `10.0.0.1` to node 0 and node 2", 23),
    # one env() name read for two nodes: both resolve to one address when the scripts run
    ('hosts { addresses = [env("NODE1"), env("NODE1")] }', 'gives `env("NODE1")` to node 0 and node 1', 23),
    ('hosts { addresses = ["10.0.0.1", env("N1"), env("N1")] }', 'gives `env("N1")` to node 1 and node 2', 23),
    ('hosts { nic = "eth0;reboot" }', "is not a network interface name", 17),
])
def test_hosts_that_cannot_describe_the_deployment(hosts, message, col):
    got = errors(with_hosts(hosts))
    assert [(c, ln, cl) for c, _, ln, cl in got] == [("SN2040", HOSTS_LINE, col)], got
    assert message in got[0][1]


@pytest.mark.parametrize("hosts, message, col", [
    ('hosts { addresses = ["10.0.0.1", "10.0.0.1"] }', "gives `10.0.0.1` to node 0 and node 1", 23),
    ('hosts { addresses = [env("N1"), env("N1")] }', 'gives `env("N1")` to node 0 and node 1', 23),
    ('hosts { nic = "eth0;reboot" }', "is not a network interface name", 17),
])
def test_hosts_errors_that_need_no_lowering_are_reported_with_an_earlier_phase_error(hosts, message, col):
    """A plan with an error of the checks (SN3001: tp × dp ≠ devices) is not lowered; the SN2040
    problems that need the typed plan only are still reported with it, so one run names both."""
    text = with_hosts(hosts).replace("    dp = 2\n", "    dp = 1\n")
    got = errors(text)
    assert sorted((c, ln) for c, _, ln, _ in got) == sorted([("SN3001", PLAN[:PLAN.index("    devices = 16")].count("\n") + 1),
                                                             ("SN2040", HOSTS_LINE)]), got
    (sn2040,) = [g for g in got if g[0] == "SN2040"]
    assert message in sn2040[1] and sn2040[3] == col


def test_distinct_env_names_are_no_duplicate():
    assert errors(with_hosts('hosts { addresses = [env("NODE0"), env("NODE1")] }')) == []


@pytest.mark.parametrize("hosts, unused", [
    ('hosts { addresses = ["10.0.0.1", "10.0.0.2", "10.0.0.3"] }', "addresses[2] (`10.0.0.3`) is unused"),
    ('hosts { addresses = ["10.0.0.1", env("N1"), env("N2"), "10.0.0.4"] }',
     'addresses[2] (env("N2")), addresses[3] (`10.0.0.4`) are unused'),
])
def test_addresses_past_the_deployment_are_a_warning(hosts, unused):
    """More addresses than nodes is likely a miscount: SN2041 says how many nodes the deployment
    uses and which entries no script reads; the plan still builds."""
    comp = compile_text(with_hosts(hosts))
    got = [(d.code.code, d.severity, d.message, *comp.source.line_col(d.span.start)) for d in comp.diagnostics]
    assert [g[:2] + g[3:] for g in got] == [("SN2041", "warning", HOSTS_LINE, 23)], got
    n = hosts.count(",") + 1
    assert f"names {n} nodes, and the deployment uses 2: {unused}" in got[0][2]
    assert comp.deployment is not None and len(comp.deployment.nodes) == 2


def test_as_many_addresses_as_nodes_is_no_warning():
    assert [d.code.code for d in compile_text(PLAN).diagnostics] == []


@pytest.mark.parametrize("address, message", [
    ("$(reboot)", "other than letters, digits and `-`"),
    # RFC 1123 host names: `-bad` would reach vLLM as the option `--data-parallel-address -bad`
    ("-bad", "starts or ends with `-`"),
    ("c..example", "no empty label"),
    ("10.0.0.256", "not an IPv4 address"),
    ("node_1", "other than letters, digits and `-`"),
    ("fe80::1::2", "not an IPv6 address"),
    # a valid IPv6 literal breaks the `http://<address>:<port>` URLs of bench.sh and the P/D proxy
    ("fd00::1", "an IPv6 address"),
    ("[fe80::1%eth0]", "an IPv6 address"),
    ("2001:db8::7", "an IPv6 address"),
])
def test_a_literal_that_is_no_address_is_rejected_at_the_literal(address, message):
    got = errors(with_hosts(f'hosts {{ addresses = ["10.0.0.1", "{address}"] }}'))
    assert [(c, ln, cl) for c, _, ln, cl in got] == [("SN2004", HOSTS_LINE, 36)], got
    assert message in got[0][1]


def test_two_listeners_on_one_port():
    got = errors(with_hosts("hosts { port = 14000  dp_rpc_port = 14000 }"))
    assert [c for c, *_ in got] == ["SN4043"] and "port 14000 on node 0" in got[0][1]
    assert errors(with_hosts("hosts { port = 14000  dp_rpc_port = 14001 }")) == []


def test_port_ranges_of_kv_transfer_are_checked():
    pd = (ROOT / "tests" / "golden" / "vllm-ascend-v4flash-pd" / "plan.sn").read_text()
    got = errors(pd.replace("  env {", "  hosts { kv_port = 8000 }\n  env {"))
    assert [c for c, *_ in got] == ["SN4043"] and "KV-transfer port" in got[0][1]


def test_the_yaml_carries_no_per_node_value():
    """Addresses and ports are per server: they go on the command line, never into <role>.yaml."""
    y = role_yaml(outputs_of(PLAN), "serve")
    assert not {k for k in y if re.match(r"(port|host|data-parallel-(address|rpc-port|start-rank|size-local))$", k)}


NIXL = (ROOT / "examples" / "broken" / "port-conflict-nixl-side-channel.sn").read_text()


@pytest.mark.parametrize("version, api_port, clash", [
    # vLLM 0.11.0: each TP rank of the TP8 prefill listens on base + tp_rank, 8000-8007
    ("0.11.0", 8000, "port 8000"), ("0.11.0", 8007, "port 8007"), ("0.11.0", 8016, None),
    # vLLM 0.23.0: one listener per DP rank, base + dp_rank: only 8000
    ("0.23.0", 8000, "port 8000"), ("0.23.0", 8001, None),
])
def test_nixl_side_channel_ports_are_checked_by_release(version, api_port, clash):
    """The NIXL side channel (VLLM_NIXL_SIDE_CHANNEL_PORT and up, the vLLM adapter's
    [[connectors.nixl.listen]] rows) is a listener of its node like the API port."""
    text = NIXL.replace('engine "vllm" {}', f'engine "vllm" {{ version = "{version}" }}')
    text = text.replace("    port = 8000\n", f"    port = {api_port}\n")
    got = errors(text)
    if clash is None:
        assert got == []
    else:
        assert [c for c, *_ in got] == ["SN4043"], got
        assert f"{clash} on node 0" in got[0][1] and "VLLM_NIXL_SIDE_CHANNEL_PORT" in got[0][1]


def test_nixl_port_comment_states_the_release_rule():
    fixed = (ROOT / "tests" / "cases" / "fixed" / "port-conflict-nixl-side-channel.sn").read_text()
    env = outputs_of(fixed)["env/prefill-0-node0.sh"]
    assert "export VLLM_NIXL_SIDE_CHANNEL_PORT=20001  # NixlConnector port base of this instance (DP rank r listens on base + r)" in env
    env = outputs_of(fixed.replace('engine "vllm" {}', 'engine "vllm" { version = "0.11.0" }'))["env/prefill-0-node0.sh"]
    assert "(ranks listen on base + DP rank × tp + tp rank)" in env


@pytest.mark.parametrize("address", ["10.0.0.2", "node-1.cluster.local", "gpu01", "a" * 63 + ".example", "node1.example."])
def test_ip_literals_and_rfc1123_names_are_addresses(address):
    from sncc.lowering.hosts import address_problem

    assert address_problem(address) is None



R1_PD = (ROOT / "tests" / "cases" / "fixed" / "port-out-of-range.sn").read_text()


@pytest.mark.parametrize("hosts, key, port", [
    # 4 API servers on node 1 from 65534: the third would be 65536
    ("hosts { port = 65534 }", "port", 65536),
    # the decode instance's DP RPC port is the base + 1
    ("hosts { dp_rpc_port = 65535 }", "dp_rpc_port", 65536),
    # Mooncake: the decode instance's range starts 16 above the base, one port per device
    ("hosts { kv_port = 65525 }", "kv_port", 65536),
    ("hosts { proxy_port = 65535 }", None, None),
])
def test_every_listener_port_fits_in_16_bits(hosts, key, port):
    """Port bases are within 1-65535, but the ports counted up from them (one per server, instance
    or rank) must be too: vLLM cannot bind 65536, and the build wrote it."""
    text = R1_PD.replace("hosts { port = 8000  kv_port = 30000 }", hosts)
    comp = compile_text(text)
    got = [d for d in comp.diagnostics if d.is_error]
    if key is None:
        assert got == [], [(d.code.code, d.message) for d in got]
        return
    assert [d.code.code for d in got] == ["SN4047"], [(d.code.code, d.message) for d in got]
    d = got[0]
    assert f"port {port}" in d.message and "65535" in d.message and d.path == ("hosts", key)
    assert comp.source.text[d.span.start:d.span.end] == re.search(rf"{key} = (\d+)", hosts).group(1)
