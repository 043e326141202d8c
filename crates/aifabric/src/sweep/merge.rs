//! Putting shards back together: every task exactly once, each result checked against the
//! task it claims to be (a merge trusts nothing a shard file says that it can check).

use super::{DesignResult, Plan, Row, Shard, SweepResult, Task, TaskResult, WorkloadRow};
use crate::Error;
use std::collections::BTreeMap;

/// Whether `r` can be what `task` produced: a merge trusts nothing a shard file says that it
/// can check (the design, the draws, the ranges of the figures), so a damaged or edited shard
/// is refused rather than merged into wrong numbers (or a panic on an index).
fn check_result(plan: &Plan, task: &Task, r: &TaskResult) -> Result<(), String> {
    if r.design != task.design {
        return Err(format!(
            "design {} where the task is on design d{}",
            r.design, task.design
        ));
    }
    let fraction = |what: &str, x: f64| {
        if (0.0..=1.0).contains(&x) {
            Ok(())
        } else {
            Err(format!("{what} {x}, outside [0, 1]"))
        }
    };
    let non_negative = |what: &str, x: Option<f64>| match x {
        Some(x) if !(x.is_finite() && x >= 0.0) => Err(format!("{what} {x}, not a time >= 0")),
        _ => Ok(()),
    };
    match task.work {
        None => {
            if r.workload.is_some() {
                return Err("a workload row in a failure-study task".into());
            }
            let mut seen = std::collections::BTreeSet::new();
            for row in &r.rows {
                fraction("min_capacity_retained", row.min_capacity_retained)?;
                // No task draws more than a sweep may (so the sums over tasks cannot
                // overflow), and none reports one scenario twice.
                let max = aifabric_failures::sweep::MAX_DRAWS;
                if row.draws == 0 || row.draws > max {
                    return Err(format!(
                        "scenario `{}` with {} draws, outside 1..={max}",
                        row.scenario, row.draws
                    ));
                }
                if !seen.insert(row.srgs.as_str()) {
                    return Err(format!("scenario `{}` listed twice", row.scenario));
                }
            }
            let draws: u64 = r.rows.iter().map(|x| x.draws).fold(0, u64::saturating_add);
            if task.samples > 0 && draws != task.samples {
                return Err(format!(
                    "{draws} draws where the task draws {}",
                    task.samples
                ));
            }
        }
        Some((w, sc)) => {
            let Some(row) = &r.workload else {
                return Err("no workload row in a workload task".into());
            };
            if !r.rows.is_empty() {
                return Err("failure-study rows in a workload task".into());
            }
            let want = &plan.workloads[w].name;
            let scenario = match sc {
                0 => "healthy",
                k => plan.file.scenarios[k - 1].name.as_str(),
            };
            if row.workload != *want || row.scenario != scenario {
                return Err(format!(
                    "workload `{}` under `{}` where the task runs `{want}` under `{scenario}`",
                    row.workload, row.scenario
                ));
            }
            non_negative("time_us", row.time_us)?;
            non_negative("bus_bw_gbytes_per_s", row.bus_bw_gbytes_per_s)?;
            non_negative("slowdown", row.slowdown)?;
        }
    }
    Ok(())
}

/// Whether `s` is shard `i` of `n` of this sweep, complete and sound: from this sweep (its
/// fingerprint), exactly the tasks of that shard, each result one the task can produce. What
/// `sweep status` asks of each shard file of a Slurm array before the merge.
pub fn check_shard(plan: &Plan, i: usize, n: usize, s: &Shard) -> Result<(), String> {
    if s.fingerprint != plan.fingerprint || s.tasks != plan.tasks.len() {
        return Err(format!(
            "from another sweep (or another version of {} or its spec)",
            plan.name
        ));
    }
    if s.shard != [i, n] {
        return Err(format!(
            "it says it is shard {}/{}, not {i}/{n}",
            s.shard[0], s.shard[1]
        ));
    }
    let want: Vec<usize> = plan.shard(i, n).iter().map(|t| t.index).collect();
    let mut got: Vec<usize> = s.results.iter().map(|r| r.task).collect();
    got.sort_unstable();
    if got != want {
        return Err(format!(
            "{} task results where the shard has {} tasks",
            got.len(),
            want.len()
        ));
    }
    for r in &s.results {
        check_result(plan, &plan.tasks[r.task], r).map_err(|e| format!("task {}: {e}", r.task))?;
    }
    Ok(())
}

/// Put shards back together: every task exactly once, from the same sweep; the result is
/// the same, byte for byte, as the whole sweep run in one process.
pub fn merge(plan: &Plan, shards: &[Shard]) -> Result<SweepResult, Error> {
    let mut results: Vec<Option<&TaskResult>> = vec![None; plan.tasks.len()];
    for s in shards {
        if s.fingerprint != plan.fingerprint || s.tasks != plan.tasks.len() {
            return Err(Error::bad_request(format!(
                "shard {}/{} is from another sweep (or another version of {} or its spec)",
                s.shard[0], s.shard[1], plan.name
            )));
        }
        let [i, n] = s.shard;
        if n == 0 || i >= n {
            return Err(Error::bad_request(format!(
                "a shard says it is shard {i}/{n}: not a shard of any run (I must be below N)"
            )));
        }
        for r in &s.results {
            let slot = results.get_mut(r.task).ok_or_else(|| {
                Error::bad_request(format!(
                    "shard {}/{}: task {} does not exist",
                    s.shard[0], s.shard[1], r.task
                ))
            })?;
            check_result(plan, &plan.tasks[r.task], r).map_err(|e| {
                Error::bad_request(format!(
                    "shard {i}/{n}, task {}: {e}; the shard file was changed or damaged: run \
                     the shard again",
                    r.task
                ))
            })?;
            if r.task % n != i {
                return Err(Error::bad_request(format!(
                    "shard {i}/{n} holds task {}, which is shard {}/{n}'s: the shard file was \
                     changed or damaged; run the shard again",
                    r.task,
                    r.task % n
                )));
            }
            if slot.is_some() {
                return Err(Error::bad_request(format!(
                    "task {} is in two shards; merge each shard once",
                    r.task
                )));
            }
            *slot = Some(r);
        }
    }
    let missing: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].is_none())
        .collect();
    if !missing.is_empty() {
        return Err(Error::bad_request(format!(
            "{} of {} tasks missing (first: {}); run the shards that hold them",
            missing.len(),
            results.len(),
            missing[0]
        )));
    }
    let mut designs: Vec<(Vec<Row>, BTreeMap<String, usize>)> =
        vec![(Vec::new(), BTreeMap::new()); plan.designs.len()];
    let mut work: Vec<Vec<WorkloadRow>> = vec![Vec::new(); plan.designs.len()];
    for r in results.into_iter().flatten() {
        if let Some(w) = &r.workload {
            work[r.design].push(w.clone());
        }
        let (rows, index) = &mut designs[r.design];
        for row in &r.rows {
            match index.get(&row.srgs) {
                Some(&k) => rows[k].draws += row.draws,
                None => {
                    index.insert(row.srgs.clone(), rows.len());
                    rows.push(row.clone());
                }
            }
        }
    }
    let designs = designs
        .into_iter()
        .zip(work)
        .enumerate()
        .map(|(d, ((mut rows, _), workloads))| {
            rows.sort_by(|a, b| {
                a.min_capacity_retained
                    .total_cmp(&b.min_capacity_retained)
                    .then(b.gpus_isolated.cmp(&a.gpus_isolated))
                    .then_with(|| a.srgs.cmp(&b.srgs))
            });
            let values: Vec<(f64, u64)> = rows
                .iter()
                .map(|r| (r.min_capacity_retained, r.draws))
                .collect();
            DesignResult {
                design: format!("d{d}"),
                overrides: plan.designs[d].clone(),
                draws: rows.iter().map(|r| r.draws).sum(),
                capacity_retained: plan
                    .file
                    .failures
                    .as_ref()
                    .map(|_| aifabric_failures::report::Distribution::of(&values)),
                max_gpus_isolated: rows.iter().map(|r| r.gpus_isolated).max().unwrap_or(0),
                scenarios: rows,
                workloads,
            }
        })
        .collect();
    // Names as the sweep file writes them, not as the command line reached it: a run from
    // another directory (a Slurm job's absolute paths) gives the same bytes.
    let file_name = std::path::Path::new(&plan.name)
        .file_name()
        .map_or_else(|| plan.name.clone(), |n| n.to_string_lossy().into_owned());
    Ok(SweepResult {
        sweep: file_name,
        spec: plan.file.spec.clone(),
        failures: plan.file.failures.clone(),
        tasks: plan.tasks.len(),
        designs,
    })
}
