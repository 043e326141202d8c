//! One function per command: arguments in, a library call, the rendering out.

pub(crate) mod cluster;
pub(crate) mod compare;
pub(crate) mod demo;
pub(crate) mod drift;
pub(crate) mod failures;
pub(crate) mod goodput;
pub(crate) mod lab;
pub(crate) mod simulate;
pub(crate) mod slurm;
pub(crate) mod sweep;
pub(crate) mod trace;
pub(crate) mod traffic;

use crate::args::*;
use crate::{
    emit, emit_versioned, load, output, print, print_json, print_line, render, write_json, Failure,
};
use aifabric::model::FabricView;
use aifabric::stages::spec;
use aifabric::versioned;

pub(crate) fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Specs(a) => specs(a),
        Command::Capacity(a) => capacity(a),
        Command::Buffers(a) => buffers(a),
        Command::CompareFabrics(a) => compare_fabrics(a),
        Command::Build(a) => build(a),
        Command::Routes(a) => routes(a),
        Command::Blackholes(a) => blackholes(a),
        Command::Ibm(a) => ibm(a),
        Command::Failures(a) => failures(a),
        Command::Collective(a) => collective(a),
        Command::Job(a) => job(a),
        Command::Cluster(a) => cluster::run(a),
        Command::Plan(a) => cluster::plan(a),
        Command::Traffic(a) => traffic(a),
        Command::Sweep(a) => sweep_command(a),
        Command::Chakra { command } => chakra(command),
        Command::Replay(a) => replay(a),
        Command::Demo(a) => demo(a),
        Command::Report(a) => report(a),
        Command::Export(a) => export(a),
        Command::Lab { command } => lab::run(command),
        Command::SlurmImport(a) => slurm::import(a),
        Command::Drift(a) => drift::run(a),
        Command::Import(a) => drift::import(a),
        Command::Validate(a) => validate(a),
        Command::Validation(a) => validation(a),
        Command::Goodput(a) => goodput::run(a),
    }
}

fn sweep_command(a: SweepArgs) -> Result<(), Failure> {
    let SweepArgs {
        command,
        file,
        shard,
        out,
        table,
        emit_slurm,
        shards,
        slurm,
        json,
    } = a;
    match (command, file) {
        (
            Some(SweepCommand::Merge {
                file,
                shards,
                out,
                table,
                json,
            }),
            _,
        ) => sweep::merge_files(&file, &shards, out.as_deref(), table.as_deref(), json),
        (Some(SweepCommand::Status { dir, json }), _) => sweep::status(&dir, json),
        (Some(SweepCommand::RerunFailed { dir, json }), _) => sweep::rerun_failed(&dir, json),
        (None, Some(file)) => sweep::run(
            &file,
            shard.as_deref(),
            sweep::Outputs {
                json: out.as_deref(),
                table: table.as_deref(),
            },
            emit_slurm.as_deref().map(|dir| sweep::Emit {
                dir,
                shards,
                options: aifabric::sweep::slurm::SlurmOptions {
                    partition: slurm.partition,
                    account: slurm.account,
                    time: slurm.time,
                    mem: slurm.mem,
                    cpus_per_task: slurm.cpus_per_task,
                    extra: slurm.sbatch,
                },
            }),
            json,
        ),
        (None, None) => Err(Failure::BadArgument(
            "aifabric sweep needs a sweep file (or `sweep merge FILE SHARDS...`)".into(),
        )),
    }
}

fn chakra(command: ChakraCommand) -> Result<(), Failure> {
    match command {
        ChakraCommand::Synth {
            job,
            out,
            prefix,
            plain,
            json,
        } => {
            let w = trace::synth(&job, &out, &prefix, !plain)?;
            emit_versioned(json, &w, |w| trace::render_written(w, &out))
        }
        ChakraCommand::Scale {
            input,
            ranks,
            out,
            dp_groups,
            json,
        } => {
            let s = trace::rescale(&input, ranks, &out, &dp_groups)?;
            emit_versioned(json, &s, |s| trace::render_scaled(s, &out))
        }
    }
}

fn failures(a: FailuresArgs) -> Result<(), Failure> {
    let FailuresArgs {
        spec,
        sweep,
        samples,
        seed,
        probability,
        mtbf,
        aggregation,
        tier,
        mitigations,
        compare_inter_bag,
        pod_sites,
        top,
        keep,
        json,
        out,
        jobs,
        simulate,
        scenario,
        bgp,
    } = a;
    let scenario = crate::args::ScenarioArgs::from(scenario);
    let setup = bgp.setup();
    let keep = keep.as_deref().map(aifabric::parse_keep).transpose()?;
    let req = aifabric::FailureRequest {
        state: scenario.describe(),
        sweep,
        samples,
        first_draw: 0,
        seed,
        probability,
        mtbf,
        aggregation: aggregation.map(|a| (a, tier)),
        mitigations,
        top,
        pod_sites,
        keep,
    };
    if let Some(jobs) = jobs {
        if !req.state.is_empty() || compare_inter_bag {
            return Err(Failure::BadArgument(
                "--jobs ranks the sweep's scenarios against the jobs on the healthy fabric; \
                 it takes no --fail/--drain/--scenario and no --compare-inter-bag"
                    .into(),
            ));
        }
        let f = load(&spec)?;
        let cluster = spec::cluster::load_cluster(&f, &jobs).map_err(Failure::BadInput)?;
        let report = failures::jobs_at_risk(&f, setup, &req, &cluster, simulate)?;
        if let Some(path) = &out {
            write_json(path, &versioned(&report))?;
        }
        return emit_versioned(json, &report, |r| failures::render_at_risk(r, top));
    }
    if compare_inter_bag {
        if !req.state.is_empty() {
            return Err(Failure::BadArgument(
                "--compare-inter-bag sweeps the healthy planar and spread builds; it \
                 takes no --fail/--drain/--scenario"
                    .into(),
            ));
        }
        let (name, text) = spec::read(&spec).map_err(Failure::BadInput)?;
        let cmp = failures::compare(&name, &text, &setup, &req)?;
        if let Some(path) = &out {
            write_json(path, &versioned(&cmp))?;
        }
        emit_versioned(json, &cmp, render::comparison)?;
    } else {
        let mut f = load(&spec)?;
        let state = scenario.resolve(&mut f)?;
        let report = failures::sweep(&f, state, setup, &req)?;
        if let Some(path) = &out {
            write_json(path, &versioned(&report))?;
        }
        emit_versioned(json, &report, |r| render::failures(r, top))?;
    }
    Ok(())
}

fn specs(a: SpecsArgs) -> Result<(), Failure> {
    let SpecsArgs { json } = a;
    let list: Vec<_> = spec::builtin::list()
        .map(|(name, description)| serde_json::json!({"name": name, "description": description}))
        .collect();
    if json {
        print_json(&versioned(&Specs { specs: list }))?;
    } else {
        let mut text = String::new();
        for (name, d) in spec::builtin::list() {
            text.push_str(&format!("{name:<14} {d}\n"));
        }
        print(&text)?;
    }
    Ok(())
}

fn capacity(a: CapacityArgs) -> Result<(), Failure> {
    let CapacityArgs {
        spec,
        json,
        scenario,
    } = a;
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, Default::default()).described(scenario.describe());
    emit_versioned(json, &study.capacity(), render::capacity)?;
    Ok(())
}

fn compare_fabrics(a: CompareFabricsArgs) -> Result<(), Failure> {
    let CompareFabricsArgs {
        quick,
        no_bag,
        bag_pfc,
        seed,
        json,
    } = a;
    let opts = aifabric::fabrics::CompareFabricsOptions {
        seed,
        quick,
        bag: !no_bag,
        bag_pfc,
    };
    let bar = crate::progress::Progress::bar("runs");
    bar.set_length(9 + if no_bag { 0 } else { 6 });
    let report = aifabric::fabrics::compare_fabrics(&opts, &mut |what| {
        bar.set_message(what.to_owned());
        bar.inc(1);
    })
    .map_err(Failure::from)?;
    bar.finish_and_clear();
    emit_versioned(json, &report, traffic::render_fabrics)?;
    Ok(())
}

fn buffers(a: BuffersArgs) -> Result<(), Failure> {
    let BuffersArgs {
        spec,
        lossless_priorities,
        mtu,
        json,
    } = a;
    let f = load(&spec)?;
    let study = aifabric::Study::healthy(&f, Default::default());
    let opts = aifabric::capacity::BufferOptions {
        lossless_priorities,
        mtu_bytes: mtu,
    };
    emit_versioned(json, &study.buffers(&opts), render::buffers)?;
    Ok(())
}

fn build(a: BuildArgs) -> Result<(), Failure> {
    let BuildArgs { spec, json, out } = a;
    let f = load(&spec)?;
    let inv = aifabric::capacity::Inventory::of(&f);
    if let Some(path) = &out {
        output::write_atomic(path, |w| {
            serde_json::to_writer(w, &FabricView(&f)).map_err(std::io::Error::other)
        })
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    if json {
        print_json(&versioned(&inv))?;
    } else {
        print(&render::inventory(&inv))?;
        if let Some(path) = &out {
            print_line(&format!("model written to {}", path.display()))?;
        }
    }
    Ok(())
}

fn routes(a: RoutesArgs) -> Result<(), Failure> {
    let RoutesArgs {
        spec,
        device,
        prefix,
        json,
        scenario,
        bgp,
    } = a;
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, bgp.setup());
    let views = study.routes(&device, prefix.as_deref())?;
    emit_versioned(json, &Routes { routes: views }, |v| {
        render::routes(&v.routes)
    })?;
    Ok(())
}

fn blackholes(a: BlackholesArgs) -> Result<(), Failure> {
    let BlackholesArgs {
        spec,
        aggregation,
        tier,
        json,
        scenario,
        bgp,
    } = a;
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, bgp.setup());
    let report = study.blackholes(aggregation, tier)?;
    emit_versioned(json, &report, render::blackholes)?;
    Ok(())
}

fn ibm(a: IbmArgs) -> Result<(), Failure> {
    let IbmArgs {
        spec,
        json,
        scenario,
    } = a;
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, Default::default());
    emit_versioned(json, &Ibm { zones: study.ibm() }, |v| render::ibm(&v.zones))?;
    Ok(())
}

/// The packet engine's configuration when `--engine` runs it (packet-engine flags without
/// it are refused), and the setup: with the packet engine, the flow engine's mode closest
/// to its load balancing (for `both`, and for the fluid parts of a collective) and its
/// seed.
pub(crate) fn engine_setup(
    sim: &SimArgs,
    packet: &PacketArgs,
    bgp: &BgpArgs,
) -> Result<(Option<aifabric::packet::Config>, aifabric::Setup), Failure> {
    if !packet.engine.packet() {
        let given = packet.given();
        if !given.is_empty() {
            let (last, rest) = given.split_last().expect("not empty");
            let flags = if rest.is_empty() {
                format!("{last} sets")
            } else {
                format!("{} and {last} set", rest.join(", "))
            };
            return Err(Failure::BadArgument(format!(
                "{flags} the packet engine: add --engine packet (or hybrid)"
            )));
        }
        return Ok((None, sim.setup(bgp)?));
    }
    let cfg = sim.packet_config(packet)?;
    let mut s = sim.setup_with_lb(bgp, aifabric::Lb::from(cfg.lb).fluid_equivalent())?;
    s.seed = cfg.seed;
    Ok((Some(cfg), s))
}

/// `run` given what a collective or a job at packet level reports as it goes: a counter of
/// the phases simulated, with a running one's flows and simulated time in its message,
/// cleared when `run` returns. A counter, not a bar: phases run side by side on the pool's
/// threads, each with its own flows, so no share of the whole (nor a time left) follows
/// from one phase's progress.
pub(crate) fn with_phase_counter<T>(run: impl FnOnce(aifabric::packet::PhaseProgressFn) -> T) -> T {
    let bar = std::sync::Arc::new(crate::progress::Progress::counter("packet phases"));
    let b = bar.clone();
    // A phase reports the count as it was when it began: the most any has reported, so
    // that the counter never goes back while a long phase runs beside shorter ones.
    let most = std::sync::atomic::AtomicU64::new(0);
    let progress: aifabric::packet::PhaseProgressFn = std::sync::Arc::new(move |p| {
        let seen = most.fetch_max(p.phases_done, std::sync::atomic::Ordering::Relaxed);
        b.set_position(seen.max(p.phases_done));
        b.set_message(format!(
            "packet phases simulated (one running: {}/{} flows done, {:.1} us in, {:.0}M events)",
            p.flows_done,
            p.flows,
            p.now_ps as f64 * 1e-6,
            p.events as f64 * 1e-6
        ));
    });
    let out = run(progress);
    bar.finish_and_clear();
    out
}

fn collective(a: CollectiveArgs) -> Result<(), Failure> {
    let CollectiveArgs {
        spec,
        op,
        algo,
        proto,
        gpus,
        placement,
        sizes,
        alpha_us,
        json,
        packet,
        sim,
        scenario,
        bgp,
    } = a;
    if !(alpha_us.is_finite() && alpha_us >= 0.0) {
        return Err(Failure::BadArgument("--alpha-us must be >= 0".into()));
    }
    let (cfg, setup) = engine_setup(&sim, &packet, &bgp)?;
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, setup);
    let req = aifabric::CollectiveRequest {
        op,
        algo: Some(algo),
        proto: Some(proto),
        gpus,
        placement,
        sizes: sizes.0,
        alpha_s: alpha_us * 1e-6,
    };
    let report = match &cfg {
        Some(cfg) => with_phase_counter(|progress| {
            study.collective_packet_with_progress(&req, cfg, packet.engine, progress)
        })?,
        None => study.collective(&req)?,
    };
    emit(json, &report, simulate::render_collective)?;
    Ok(())
}

fn traffic(a: TrafficArgs) -> Result<(), Failure> {
    let TrafficArgs {
        spec,
        tm,
        pattern,
        size,
        gpus,
        placement,
        cut,
        json,
        packet,
        sim,
        scenario,
        bgp,
    } = a;
    if cut && packet.engine != aifabric::Engine::Hybrid {
        return Err(Failure::BadArgument(format!(
            "--cut cuts the hybrid engine's run: add --engine hybrid (not {})",
            packet.engine
        )));
    }
    let (cfg, setup) = engine_setup(&sim, &packet, &bgp)?;
    let source = match (tm, pattern) {
        (Some(path), _) => aifabric::TrafficSource::File(path),
        (None, Some(pattern)) => aifabric::TrafficSource::Pattern {
            pattern,
            gpus: gpus.unwrap_or(1024),
            bytes: size,
        },
        (None, None) => {
            return Err(Failure::BadArgument(
                "give --tm FILE or --pattern; e.g. --pattern permutation".into(),
            ))
        }
    };
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, setup);
    if let Some(cfg) = cfg {
        let t = std::time::Instant::now();
        let cpu = traffic::cpu_seconds();
        // Data packets acknowledged of all (a permutation's flows all end near its end,
        // so flows done would give no time left), with the flows done, the simulated time
        // and the events so far.
        let bar = crate::progress::Progress::bar("packets");
        let mut show = |p: &aifabric::packet::Progress| {
            bar.set_length(p.packets);
            bar.set_position(p.packets_done);
            bar.set_message(
                if p.flows_done == p.flows && packet.engine == aifabric::Engine::Both {
                    "packets done; the flow engine now".to_owned()
                } else {
                    format!(
                        "packets acknowledged ({} of {} flows done, {:.1} us simulated, \
                         {:.0}M events)",
                        p.flows_done,
                        p.flows,
                        p.now_ps as f64 * 1e-6,
                        p.events as f64 * 1e-6
                    )
                },
            );
        };
        let report = if cut {
            study.traffic_packet_cut(&source, gpus, placement, &cfg, &mut show)
        } else {
            study.traffic_packet_with_progress(
                &source,
                gpus,
                placement,
                &cfg,
                packet.engine,
                &mut show,
            )
        };
        bar.finish_and_clear();
        let report = report?;
        let run = traffic::RunTime {
            wall_s: t.elapsed().as_secs_f64(),
            cpu_s: cpu.and_then(|c| Some(traffic::cpu_seconds()? - c)),
        };
        emit(json, &report, |r| traffic::render_packet(r, run))?;
    } else {
        let report = study.traffic(&source, gpus, placement)?;
        emit(json, &report, traffic::render)?;
    }
    Ok(())
}

fn job(a: JobArgs) -> Result<(), Failure> {
    let JobArgs {
        spec,
        job,
        placement,
        json,
        packet,
        sim,
        scenario,
        bgp,
    } = a;
    sim.setup_for_jobs(&bgp, "job")?;
    let (cfg, setup) = engine_setup(&sim, &packet, &bgp)?;
    let it = spec::job::load(&job).map_err(Failure::BadInput)?;
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, setup);
    let report = match &cfg {
        Some(cfg) => with_phase_counter(|progress| {
            study.job_packet_with_progress(&it, placement, cfg, packet.engine, progress)
        })?,
        None => study.job(&it, placement)?,
    };
    emit(json, &report, simulate::render_job)?;
    Ok(())
}

fn replay(a: ReplayArgs) -> Result<(), Failure> {
    let ReplayArgs {
        spec,
        trace: dir,
        placement,
        peak_tflops,
        efficiency,
        alpha_us,
        window,
        json,
        sim,
        scenario,
        bgp,
    } = a;
    let setup = sim.setup(&bgp)?;
    let positive = |v: Option<f64>, what: &str| match v {
        Some(x) if !(x.is_finite() && x > 0.0) => Err(Failure::BadArgument(format!(
            "{what} must be a positive number, not {x}"
        ))),
        _ => Ok(v),
    };
    let peak = positive(peak_tflops, "--peak-tflops")?;
    let eff = positive(efficiency, "--efficiency")?;
    if let Some(a) = alpha_us.filter(|a| !(a.is_finite() && *a >= 0.0)) {
        return Err(Failure::BadArgument(format!(
            "--alpha-us must be a number >= 0, not {a}"
        )));
    }
    let mut f = load(&spec)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, setup);
    let req = aifabric::ReplayRequest {
        placement,
        alpha_s: alpha_us.map(|a| a * 1e-6),
        peak_flops_per_s: peak.map(|p| p * 1e12),
        efficiency: eff,
        window,
    };
    let r = trace::replay(&study, &dir, &req)?;
    emit(json, &r, trace::render_replay)?;
    Ok(())
}

fn demo(a: DemoArgs) -> Result<(), Failure> {
    let DemoArgs {
        out,
        quiet,
        json,
        scenario,
    } = a;
    let scenario = crate::args::ScenarioArgs::from(scenario);
    let summary = demo::run(&out, quiet, json, &scenario)?;
    if json {
        print_json(&versioned(&summary))?;
    }
    Ok(())
}

/// `report.json` and `report.html` in `out` may be written (nothing there, or regular
/// files): checked before the run, so it never ends in a refusal after its work.
pub(crate) fn check_report_files(out: &std::path::Path) -> Result<(), Failure> {
    for name in ["report.json", "report.html"] {
        aifabric::check_output_file(&out.join(name))
            .map_err(|e| Failure::BadArgument(e.to_string()))?;
    }
    Ok(())
}

fn report(a: ReportArgs) -> Result<(), Failure> {
    let ReportArgs {
        spec,
        out,
        compare,
        sweep,
        gpus,
        pair_tables,
        jobs,
        ops,
        job,
        json,
        scenario,
    } = a;
    if let [a, b] = &compare[..] {
        return compare::run(a, b, json);
    }
    // Clap requires both without --compare.
    let (Some(spec), Some(out)) = (spec, out) else {
        return Err(Failure::BadArgument(
            "give SPEC and --out DIR, or --compare A.json B.json".into(),
        ));
    };
    let scenario = crate::args::ScenarioArgs::from(scenario);
    check_report_files(&out)?;
    let sweep = match sweep.as_str() {
        "all" => None,
        c => Some(aifabric::failures::class(c, "--sweep")?),
    };
    let (name, text) = spec::read(&spec).map_err(Failure::BadInput)?;
    let mut f = spec::build_str(&name, &text).map_err(Failure::BadInput)?;
    let cluster = jobs
        .map(|j| spec::cluster::load_cluster(&f, &j))
        .transpose()
        .map_err(Failure::BadInput)?;
    let ops = ops
        .map(|o| spec::ops::load_ops(&f, &o))
        .transpose()
        .map_err(Failure::BadInput)?;
    let job = job
        .map(|j| spec::job::load(&j))
        .transpose()
        .map_err(Failure::BadInput)?
        .map(|it| aifabric::ReportJob {
            it,
            placement: None,
            scenario: None,
            mitigation: None,
            ran: Vec::new(),
        });
    let opts = aifabric::ReportOptions {
        sweep,
        gpus,
        pair_tables,
        spec_text: Some((name, text)),
        cluster,
        ops,
        job,
        ..Default::default()
    };
    let bar = crate::progress::Progress::bar("report");
    let state = scenario.resolve(&mut f)?;
    let opts = aifabric::ReportOptions {
        state: aifabric::failures::starting_state(&state, &scenario.describe())?,
        ..opts
    };
    let study = aifabric::Study::new(&f, state, aifabric::Setup::default());
    let (data, html) = study.report(&opts, &|i, n, what| {
        bar.set_length(n);
        bar.set_position(i);
        bar.set_message(what.to_owned());
    })?;
    bar.finish_and_clear();
    let page = write_report(&out, &data, &html)?;
    if json {
        print_json(&versioned(&data))?;
    } else {
        print_line(&format!("report: {}", page.display()))?;
    }
    incomplete(&data)
}

/// Write `report.json` and `report.html` into `out` (created if missing), each atomically;
/// the page's path.
pub(crate) fn write_report(
    out: &std::path::Path,
    data: &aifabric::export::ReportData,
    html: &str,
) -> Result<std::path::PathBuf, Failure> {
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", out.display())))?;
    write_json(&out.join("report.json"), &versioned(data))?;
    let page = out.join("report.html");
    output::write_atomic(&page, |w| std::io::Write::write_all(w, html.as_bytes()))
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", page.display())))?;
    Ok(page)
}

/// A written report with sections that failed is a runtime failure (exit 1) naming each,
/// once both files hold what could be made.
pub(crate) fn incomplete(data: &aifabric::export::ReportData) -> Result<(), Failure> {
    if data.is_complete() {
        return Ok(());
    }
    let parts: Vec<String> = data
        .failed_sections
        .iter()
        .map(|x| format!("{}: {}", x.section, x.error))
        .collect();
    Err(Failure::Runtime(format!(
        "the report was written without {} (marked failed in report.json's \
         `failed_sections` and on the page): {}",
        render::count(parts.len() as u64, "section", "sections"),
        parts.join("; ")
    )))
}

fn export(a: ExportArgs) -> Result<(), Failure> {
    let ExportArgs {
        spec,
        format,
        out,
        aggregation,
        json,
        bgp,
        speeds,
    } = a;
    let mut f = load(&spec)?;
    if speeds.apply(&mut f)? {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"export: the links carry the speeds given; what the scenario fails or drains is \
              not exported (every planned link and session is; `lab check` takes them down)\n",
        );
    }
    let study = aifabric::Study::healthy(&f, bgp.setup());
    let bar = crate::progress::Progress::bar("files");
    let files = study.export_to_with_progress(format, &out, aggregation, &mut |k, n, name| {
        bar.set_length(n as u64);
        bar.set_position(k as u64);
        bar.set_message(format!("writing {name}"));
    })?;
    bar.finish_and_clear();
    let total: u64 = files.iter().map(|x| x.bytes).sum();
    let files: Vec<_> = files
        .into_iter()
        .map(|x| serde_json::json!({"file": x.file, "path": x.path, "bytes": x.bytes}))
        .collect();
    if json {
        print_json(&serde_json::json!({
            "schema_version": aifabric::SCHEMA_VERSION,
            "spec": f.name(),
            "files": files,
        }))?;
    } else {
        let mut text = String::new();
        for x in &files {
            text.push_str(&format!(
                "{} ({} bytes)\n",
                x["path"].as_str().unwrap_or(""),
                x["bytes"]
            ));
        }
        text.push_str(&format!(
            "{} files, {:.1} MB in {}\n",
            files.len(),
            total as f64 / 1e6,
            out.display()
        ));
        print(&text)?;
    }
    Ok(())
}

fn validate(a: ValidateArgs) -> Result<(), Failure> {
    let ValidateArgs { spec, json } = a;
    let f = load(&spec)?;
    let inv = aifabric::capacity::Inventory::of(&f);
    if json {
        print_json(&serde_json::json!({
            "schema_version": aifabric::SCHEMA_VERSION,
            "valid": true,
            "inventory": inv,
        }))?;
    } else {
        print_line(&format!(
            "{spec}: valid ({} GPUs, {} switches, {} links)",
            inv.gpus, inv.switches, inv.links
        ))?;
    }
    Ok(())
}

fn validation(a: ValidationArgs) -> Result<(), Failure> {
    let ValidationArgs { markdown, json } = a;
    let (v, derived) = aifabric::validation::all()?;
    if markdown {
        return print(&v.markdown());
    }
    emit_versioned(json, &v, |v| render::validation(v, derived))
}

/// `aifabric specs --json`: the built-in specs.
#[derive(serde::Serialize)]
struct Specs {
    specs: Vec<serde_json::Value>,
}

/// `aifabric routes --json`: one view per prefix.
#[derive(serde::Serialize)]
struct Routes {
    routes: Vec<aifabric::routing::RouteView>,
}

/// `aifabric ibm --json`: one entry per DSF zone.
#[derive(serde::Serialize)]
struct Ibm {
    zones: Vec<aifabric::routing::ZoneIbm>,
}
