"""Load aifabric's GraphML and node-link exports with NetworkX and check their sizes.

Usage: python3 scripts/check_networkx.py DIR NODES EDGES
DIR holds fabric.graphml and fabric.json (`aifabric export SPEC --format graphml|nodelink`).
"""
import json
import sys

import networkx as nx

d, nodes, edges = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
g = nx.read_graphml(f"{d}/fabric.graphml")
assert (g.number_of_nodes(), g.number_of_edges()) == (nodes, edges), (g.number_of_nodes(), g.number_of_edges())
with open(f"{d}/fabric.json") as fh:
    data = json.load(fh)
try:
    h = nx.node_link_graph(data, edges="links")
except TypeError:  # NetworkX before 3.4 has no `edges` argument; "links" is its default
    h = nx.node_link_graph(data)
assert (h.number_of_nodes(), h.number_of_edges()) == (nodes, edges), (h.number_of_nodes(), h.number_of_edges())
print(f"networkx {nx.__version__}: {nodes} nodes and {edges} edges in both exports")
