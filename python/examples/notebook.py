# %% [markdown]
# # aifabric in a notebook
#
# A region as a network architect and an ML-infrastructure researcher would look at it from
# Jupyter: capacity, single links and switches failing at random, a collective under a
# drain, a traffic matrix's flows and links as DataFrames, the fabric as a NetworkX graph.
# Each `# %%` is a cell (Jupyter, VS Code); the file also runs as a script:
# `python python/examples/notebook.py`. It needs `pip install ./python pandas polars pyarrow
# networkx`.
#
# Every result is the CLI's `--json` contract as a dict, shown in a cell as a few lines of
# headline figures; `.frame()` is its main table as a pandas DataFrame, `r.json(indent=2)`
# the whole contract.

# %%
import aifabric

fabric = aifabric.Fabric("prometheus")
print(fabric)

# %% [markdown]
# ## Capacity between the regions and oversubscription per tier

# %%
cap = fabric.capacity()
print(cap)  # what a cell ending in `cap` shows: three lines, not 13 KB of JSON

# %%
tiers = cap.frame()  # the tiers, one row each; cap.frames lists the other tables
print(tiers.sort_values("oversubscription", ascending=False).head(3).to_string(index=False))
for p in cap.region_pairs:  # fields are attributes too
    print(f"{p['a']} <-> {p['b']}: {p['links']} links, {p['capacity_tbps_per_direction']:.0f} Tb/s per direction")

# %% [markdown]
# ## Monte Carlo: every link down with probability 1e-4 and every BAG chassis with 0.01
# (about 235 links per draw; assumed rates: the sources publish none)

# %%
mc = fabric.failures(
    sweep="montecarlo",
    samples=300,
    seed=1,
    probability=["link=1e-4", "chassis=0.01", "building=0", "hall=0", "pd=0", "conduit=0"],
)
print(mc)
s = mc.summary
print(f"{s['draws']} draws, {s['scenarios']} distinct patterns, worst: {s['worst']}")
df = mc.frame()  # one row per scenario, worst first
short = df.assign(scenario=df["scenario"].str.slice(0, 48))
print(short[["scenario", "draws", "min_capacity_retained", "gpus_isolated"]].head(5).to_string())
print("capacity kept, P1 over the draws:", df["min_capacity_retained"].quantile(0.01))

# %% [markdown]
# ## A collective under a drain: what BAG plane 3 costs a spread all-reduce

# %%
drain = {"drain": ["east.bag.plane3"]}
ar = fabric.collective(gpus=1024, sizes="256M", placement="spread", scenario=drain)
print(ar)
row = ar.rows[0]
c = ar.crossing
print(f"all-reduce 256 MiB on 1,024 GPUs: {row['bus_bw_gbytes_per_s']:.1f} GB/s bus bandwidth, "
      f"slowdown {row['slowdown']:.3f}x with east.bag.plane3 drained")
# Why so little: the drain takes `links_out` links, the healthy run used `crossed` of them,
# and the other 15 planes carry their share without becoming the bottleneck.
print(f"the drain takes {c['links_out']} links; the healthy run crossed {c['crossed']} of them")

# %% [markdown]
# ## A traffic matrix: per-flow times and per-link loads as polars DataFrames
# Every engine option is a keyword argument (`lb=`, `seed=`, `max_paths=` ...): completion
# and `help(fabric.traffic)` list them, and a mistyped one raises `TypeError`.

# %%
import polars as pl

tr = fabric.traffic(pattern="permutation", gpus=2048, placement="spread", size="16M", lb="spray")
print(tr)
flows = tr.flows.to_polars()
links = tr.links.to_polars()
print(f"{len(flows)} flows, makespan {tr.result['makespan_s'] * 1e3:.3f} ms")
print(flows.select(pl.col("fct_s").quantile(0.5).alias("p50_s"), pl.col("fct_s").max().alias("max_s")))
print(links.group_by("tier").agg(pl.len().alias("links"), pl.col("utilization").max().alias("max_util")).sort("tier"))

# %% [markdown]
# ## The fabric as a graph: NetworkX for what aifabric does not ask
# One node per device (`role`, `zone`, `model`), one edge per bundle of parallel links
# (`links`, `speed_gbps` per link, `capacity_gbps`). Here on the smaller `llama3-24k`.

# %%
g = aifabric.Fabric("llama3-24k").to_networkx()
print(f"{g.number_of_nodes()} devices, {g.number_of_edges()} bundles, "
      f"{sum(n for _, _, n in g.edges(data='links'))} links")
spine = [d for d, role in g.nodes(data="role") if role == "atsw"]
print(f"{len(spine)} aggregation switches, each with {g.degree(spine[0])} neighbours")
