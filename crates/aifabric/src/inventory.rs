//! What a fabric holds, as `build`, `validate` and `capacity` summarize it: counts (the BAG
//! layers apart from the L2 zones), the GPUs jobs can actually be given (whole scale-up
//! domains), and the scenario a capacity report was made under.

use crate::Study;
use aifabric_capacity::CapacityReport;
use aifabric_model::{Fabric, FailureMask, Role, ZoneKind};
use aifabric_workload::placement::Domains;
use serde::Serialize;
use std::collections::BTreeMap;

/// The GPUs jobs can be placed on: GPUs are handed out in whole scale-up domains of a rack
/// (`aifabric_workload::placement`), so a rack whose GPU count is not a multiple of the
/// domain size leaves its remainder unused (`prometheus`: racks of 36 in domains of 8 leave
/// 4 each).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UsableGpus {
    /// The scale-up domain size counted with (GPUs; 8 unless a command's `--scale-up` or a
    /// job file says otherwise).
    pub scale_up_gpus: u32,
    /// Live GPUs in whole domains: the most any job (or all jobs together) can use.
    pub gpus: u64,
    /// Live GPUs that fill no domain of their rack.
    pub left_out: u64,
    /// Racks that leave some out.
    pub racks_left_out: u64,
    /// The largest domain size up to `scale_up_gpus` that leaves no live GPU out (0 without
    /// GPUs).
    pub whole_size: u32,
}

impl UsableGpus {
    /// The usable GPUs of `f` under `down` in domains of `scale_up_gpus`.
    pub fn of(f: &Fabric, down: &FailureMask, scale_up_gpus: u32) -> UsableGpus {
        let doms = Domains::new(f, scale_up_gpus, down);
        let (left_out, racks_left_out) = doms.left_out();
        UsableGpus {
            scale_up_gpus,
            gpus: doms.total_gpus() as u64,
            left_out,
            racks_left_out,
            whole_size: doms.whole_size(scale_up_gpus),
        }
    }

    /// `jobs can use N of the M live GPUs: ...` when some are left out, else `None`.
    pub fn sentence(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "jobs can use {} of the {} live GPUs: in scale-up domains of {}, {} GPUs in {} \
                 racks fill no domain of their rack (a domain never straddles racks); a \
                 domain size of {} uses them all (`--scale-up {}`, or scale_up.gpus in a job \
                 file)",
                self.gpus,
                self.gpus + self.left_out,
                self.scale_up_gpus,
                self.left_out,
                self.racks_left_out,
                self.whole_size,
                self.whole_size
            )
        })
    }
}

/// Counts `build` and `validate` print.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inventory {
    /// Spec name.
    pub name: String,
    /// Regions.
    pub regions: usize,
    /// Buildings.
    pub buildings: usize,
    /// L2 zones (DSF, NSF, RoCE, fat tree): the BAG layers are counted apart.
    pub zones: usize,
    /// BAG layers (one per region that has a BAG, hubs included).
    pub bag_layers: usize,
    /// GPUs installed.
    pub gpus: u64,
    /// The GPUs jobs can use, in whole scale-up domains of 8.
    pub usable_gpus: UsableGpus,
    /// Switches.
    pub switches: u64,
    /// Links.
    pub links: u64,
    /// Bundles (parallel links and hyperports).
    pub bundles: u64,
    /// Devices per role.
    pub devices_by_role: BTreeMap<String, u64>,
}

impl Inventory {
    /// The inventory of `f` (healthy).
    pub fn of(f: &Fabric) -> Inventory {
        let mut by_role = BTreeMap::new();
        for d in f.devices() {
            *by_role.entry(d.role.as_str().to_owned()).or_insert(0) += 1;
        }
        let gpus = by_role.get(Role::Gpu.as_str()).copied().unwrap_or(0);
        let bag_layers = f.zones().iter().filter(|z| z.kind == ZoneKind::Bag).count();
        Inventory {
            name: f.name().to_owned(),
            regions: f.regions().len(),
            buildings: f.buildings().len(),
            zones: f.zones().len() - bag_layers,
            bag_layers,
            gpus,
            usable_gpus: UsableGpus::of(
                f,
                &FailureMask::none(f),
                aifabric_dataplane::NetParams::default().scale_up_gpus,
            ),
            switches: f.devices().len() as u64 - gpus,
            links: f.links().len() as u64,
            bundles: f.bundles().len() as u64,
            devices_by_role: by_role,
        }
    }
}

/// The scenario a result was computed under, as given and as counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AppliedScenario {
    /// As the user gave it (`drain east.bag.plane1; scenario s.yaml`), `healthy` when
    /// nothing is failed or drained.
    pub description: String,
    /// Devices and links marked failed by it (a failed device's links are not counted).
    pub failed: Counts,
    /// Hard-drained: out of service, as failed for capacity.
    pub drained: Counts,
    /// Soft-drained (graceful shutdown): still carrying traffic when nothing else is left,
    /// so counted as live by the capacity report.
    pub drained_soft: Counts,
}

/// Devices and links of a mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Devices.
    pub devices: u64,
    /// Links (besides those of the devices).
    pub links: u64,
}

impl Counts {
    fn of(m: &FailureMask) -> Counts {
        let (devices, links) = m.counts();
        Counts {
            devices: devices as u64,
            links: links as u64,
        }
    }

    fn any(self) -> bool {
        self.devices + self.links > 0
    }
}

/// [`Study::capacity`]: the capacity report under the study's scenario, the scenario it
/// applied, and the GPUs jobs can use under it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Capacity {
    /// The capacity report (its fields at the top level of the JSON).
    #[serde(flatten)]
    pub report: CapacityReport,
    /// The scenario applied.
    pub scenario: AppliedScenario,
    /// The GPUs jobs can use, live and in whole scale-up domains of the study's size.
    pub usable_gpus: UsableGpus,
}

impl Study<'_> {
    /// The capacity report under the scenario (soft-drained links still carry traffic, so
    /// only what is unusable counts as down), with the scenario it applied (named as
    /// [`Study::described`] says) and the usable GPUs.
    pub fn capacity(&self) -> Capacity {
        let down = self.scenario.unusable();
        Capacity {
            report: aifabric_capacity::capacity_report(self.fabric, &down),
            scenario: self.applied_scenario(),
            usable_gpus: UsableGpus::of(self.fabric, &down, self.setup.net.scale_up_gpus),
        }
    }

    /// The study's scenario as given ([`Study::described`]) and as counted.
    pub fn applied_scenario(&self) -> AppliedScenario {
        let s = &self.scenario;
        let (failed, drained, drained_soft) = (
            Counts::of(&s.failed),
            Counts::of(&s.drained_hard),
            Counts::of(&s.drained_soft),
        );
        let description = match self.description.as_deref() {
            Some(d) if !d.is_empty() => d.to_owned(),
            _ if failed.any() || drained.any() || drained_soft.any() => {
                "failures and drains (not described)".to_owned()
            }
            _ => "healthy".to_owned(),
        };
        AppliedScenario {
            description,
            failed,
            drained,
            drained_soft,
        }
    }
}
