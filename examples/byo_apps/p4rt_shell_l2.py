"""A P4Runtime controller of one's own, written with p4runtime-shell (an example for the
`p4` architecture's `controller = "command"`; tests/e2e/test_byo_p4runtime.py runs it).

    python3 p4rt_shell_l2.py SWITCHES_JSON TOPOLOGY_JSON

Proactive L2 for sdnperf's l2.p4 (table L2Ingress.bridge.dmac): every known host's MAC
toward its port, anything else (broadcast, unknown) flooded to a multicast group of all
ports (the default action). It waits for each switch to listen, pushes the pipeline named
in SWITCHES_JSON, and stays connected (primary) until it is stopped.
"""
import collections, json, os, socket, sys, time
os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
import p4runtime_sh.shell as sh

switches, topo = (json.load(open(p)) for p in sys.argv[1:3])
neighbours = collections.defaultdict(dict)  # switch -> next switch -> own port
for l in topo["links"]:
    neighbours[l["a"]][l["b"]] = l["a_port"]
    neighbours[l["b"]][l["a"]] = l["b_port"]

def port_toward(sw, target):
    seen, queue = {sw}, collections.deque([(sw, None)])
    while queue:
        here, first = queue.popleft()
        if here == target:
            return first
        for nxt, port in neighbours[here].items():
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, first if first is not None else port))

clients = []
ports_of = {s["name"]: [int(p) for p in s["ports"]] for s in topo["switches"]}
for s in switches["switches"]:
    host, port = s["grpc_address"].rsplit(":", 1)
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    sh.setup(device_id=s["device_id"], grpc_addr=s["grpc_address"], election_id=(0, 1),
             config=sh.FwdPipeConfig(switches["p4info"], switches["bmv2_json"]), verbose=False)
    for h in topo["hosts"]:
        port = h["port"] if h["switch"] == s["name"] else port_toward(s["name"], h["switch"])
        te = sh.TableEntry("L2Ingress.bridge.dmac")(action="L2Ingress.bridge.forward")
        te.match["eth_dst"] = h["mac"]
        te.action["port"] = str(port)
        te.insert()
    group = sh.MulticastGroupEntry(1)
    for port in ports_of[s["name"]]:
        group.add(port, 1)
    group.insert()
    te = sh.TableEntry("L2Ingress.bridge.dmac")(action="L2Ingress.bridge.flood")
    te.is_default = True
    te.action["group"] = "1"
    te.modify()
    clients.append(sh.client)  # keep every stream open: we stay primary
    print("programmed", s["name"], flush=True)
while True:
    time.sleep(1)
