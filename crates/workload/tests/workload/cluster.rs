//! Cluster states: disjoint placement of several jobs, host names.

use aifabric_model::{DeviceId, Fabric, FailureMask};
use aifabric_workload::cluster::{host_name, hosts, place_free, Cluster, ClusterJob};
use aifabric_workload::job::Iteration;
use aifabric_workload::Placement;

fn fabric() -> Fabric {
    aifabric_spec::build_str("two.yaml", aifabric_fixtures::specs::TWO_FAT_TREE_BUILDINGS).unwrap()
}

fn it(gpus: u32) -> Iteration {
    let text = format!(
        "name: t\ngpus: {gpus}\nparallelism: {{ dp: {gpus} }}\nscale_up: {{ gpus: 2 }}\n\
         model: {{ parameters: 1e9, layers: 4, hidden: 1024, sequence_length: 1024, \
         global_batch: {gpus} }}\ncompute: {{ gpu: h100-sxm }}\n"
    );
    aifabric_spec::job::parse("t", &text).unwrap()
}

fn job(name: &str, gpus: Vec<DeviceId>) -> ClusterJob {
    ClusterJob {
        name: name.into(),
        iteration: it(gpus.len() as u32),
        gpus,
        placed_by: "packed".into(),
    }
}

#[test]
fn overlapping_jobs_are_refused_and_disjoint_ones_kept() {
    let f = fabric();
    let down = FailureMask::none(&f);
    let mut taken = vec![false; f.devices().len()];
    let a = place_free(&f, 16, 2, Placement::Packed, &down, &taken, None).unwrap();
    let err = Cluster::new(&f, vec![job("a", a.clone()), job("b", a.clone())]).unwrap_err();
    assert_eq!(err.job, 1);
    assert!(err.message.contains("already uses"), "{err}");
    let err = Cluster::new(&f, vec![job("a", a.clone()), job("a", a.clone())]).unwrap_err();
    assert!(err.message.contains("own name"), "{err}");
    for g in &a {
        taken[g.idx()] = true;
    }
    let b = place_free(&f, 16, 2, Placement::Packed, &down, &taken, None).unwrap();
    assert!(b.iter().all(|g| !a.contains(g)));
    let c = Cluster::new(&f, vec![job("a", a), job("b", b)]).unwrap();
    assert_eq!(c.gpus(), 32);
    let owners = c.owners(&f);
    assert_eq!(owners.iter().filter(|o| o.is_some()).count(), 32);
    assert_eq!(owners.iter().filter(|o| **o == Some(1)).count(), 16);
}

#[test]
fn placement_within_allowed_gpus_only() {
    let f = fabric();
    let down = FailureMask::none(&f);
    let taken = vec![false; f.devices().len()];
    let all: Vec<DeviceId> = f.devices_with_role(aifabric_model::Role::Gpu).collect();
    // Only the last 32 GPUs allowed: packed takes them from there.
    let mut allowed = vec![false; f.devices().len()];
    for g in &all[all.len() - 32..] {
        allowed[g.idx()] = true;
    }
    let p = place_free(&f, 8, 2, Placement::Packed, &down, &taken, Some(&allowed)).unwrap();
    assert_eq!(p, all[all.len() - 32..all.len() - 24].to_vec());
    assert!(place_free(&f, 40, 2, Placement::Packed, &down, &taken, Some(&allowed)).is_err());
}

#[test]
fn host_names_group_a_domain() {
    let f = fabric();
    let hs = hosts(&f, 2, &FailureMask::none(&f));
    assert_eq!(hs.len(), (16 + 128) / 2);
    for (name, gpus) in &hs {
        assert_eq!(gpus.len(), 2);
        assert!(gpus.iter().all(|&g| host_name(&f, g, 2) == *name), "{name}");
    }
    let mut names: Vec<_> = hs.iter().map(|h| &h.0).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), hs.len(), "host names are unique");
}
