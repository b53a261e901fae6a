"""An example of your own Mininet topology, used by topo-custom.toml.

Any `mininet.topo.Topo` subclass works: sdnperf imports it ("custom_topo:Dumbbell", looked up
next to the study file first), builds it with the study's `args` as keyword arguments, and
runs it under every architecture of the study. Name hosts h<n> and switches s<n> and sdnperf
keeps your names; other names are renumbered (and `sdnperf topo show` lists the mapping).
Link options bw (Mbit/s), delay ("5ms"), loss (%) and port numbers are kept. Files written
for `mn --custom FILE --topo NAME` work too: "FILE.py:NAME" finds NAME in their `topos` dict.
"""

from mininet.topo import Topo


class Dumbbell(Topo):
    """Two switches joined by one bottleneck link, `hosts_per_side` hosts on each side.

        h1 ..          .. h(n+1)
        h2 -- s1 ==== s2 -- h(n+2)
        hn ..          .. h2n
    """

    def build(self, hosts_per_side=2, bottleneck_bw=None):
        left, right = self.addSwitch("s1"), self.addSwitch("s2")
        # Only set bw when asked: an unset option falls back to the study's [topology.link].
        opts = {"bw": bottleneck_bw} if bottleneck_bw else {}
        self.addLink(left, right, **opts)
        for i in range(1, 2 * hosts_per_side + 1):
            host = self.addHost(f"h{i}")
            self.addLink(host, left if i <= hosts_per_side else right)
