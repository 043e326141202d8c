//! The packet engine's settings as a user gives them, each parsed once into a typed value
//! where it is read (the CLI's flags, the Python keywords); [`PacketOptions::config`] only
//! combines them with a preset.
//!
//! Each setting's `FromStr` error says how to write it, without naming the place: the caller
//! names it (`--ecn` on the command line, `ecn=` in Python).

use crate::Error;
use aifabric_dataplane::Lb;
use aifabric_packet::{Admission, Cc, Config, PacketLb, Pfc};
use std::fmt;
use std::str::FromStr;

/// Every model parameter from one published setup; flags given on top of it override it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// htsim's Ultra Ethernet regression runs ([`Config::uec_htsim`]).
    UecHtsim,
    /// A RoCE fabric as Meta ran its 400G AI zones ([`Config::roce`]).
    Roce,
}

/// Presets [`Preset`] parses.
pub const PRESETS: &str = "uec-htsim, roce";

impl FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uec-htsim" => Ok(Preset::UecHtsim),
            "roce" => Ok(Preset::Roce),
            _ => Err(format!(
                "unknown preset `{s}`{}; presets are {PRESETS}",
                aifabric_model::did_you_mean_hint(s, &["uec-htsim", "roce"])
            )),
        }
    }
}

/// A sender's congestion control, as chosen by name (the parameters follow from the fabric).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcChoice {
    /// NSCC (Ultra Ethernet's sender congestion control).
    Nscc,
    /// DCQCN with the paper's rate steps.
    Dcqcn,
    /// DCQCN with htsim's larger steps.
    DcqcnHtsim,
    /// No congestion control.
    LineRate,
}

impl FromStr for CcChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "nscc" => Ok(CcChoice::Nscc),
            "dcqcn" => Ok(CcChoice::Dcqcn),
            "dcqcn-htsim" => Ok(CcChoice::DcqcnHtsim),
            "line-rate" => Ok(CcChoice::LineRate),
            _ => Err(
                "unknown congestion control; give nscc, dcqcn, dcqcn-htsim or line-rate".to_owned(),
            ),
        }
    }
}

/// NSCC's base RTT and window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseRtt {
    /// The longest path's for every flow (htsim's default).
    Network,
    /// Each flow's own path's.
    Path,
}

impl FromStr for BaseRtt {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "network" => Ok(BaseRtt::Network),
            "path" => Ok(BaseRtt::Path),
            _ => Err(
                "give network (the longest path's, for every flow) or path (each \
                      flow's own)"
                    .to_owned(),
            ),
        }
    }
}

/// ECN marking on the data queues.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ecn {
    /// No marking.
    Off,
    /// RED-style marking: probability linear from 0 at `min_bytes` of queue to
    /// `max_probability` at `max_bytes`, 1 above.
    Red {
        /// Queue where marking starts, bytes.
        min_bytes: u64,
        /// Queue where the probability reaches `max_probability`, bytes.
        max_bytes: u64,
        /// RED's Pmax, in (0, 1].
        max_probability: f64,
    },
}

impl FromStr for Ecn {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "off" {
            return Ok(Ecn::Off);
        }
        let bad = || {
            "give MIN:MAX in bytes of queue (e.g. 37350:145250), MIN:MAX:PMAX with \
                 the marking probability at MAX (RED's Pmax, 0 < PMAX <= 1; e.g. \
                 5000:200000:0.01 as DCQCN's switches), or off"
                .to_owned()
        };
        let mut parts = s.split(':').map(str::trim);
        let min_bytes = parts.next().and_then(|x| x.parse().ok()).ok_or_else(bad)?;
        let max_bytes = parts.next().and_then(|x| x.parse().ok()).ok_or_else(bad)?;
        let max_probability: f64 = match parts.next() {
            Some(x) => x.parse().map_err(|_| bad())?,
            None => 1.0,
        };
        if parts.next().is_some() || !(max_probability > 0.0 && max_probability <= 1.0) {
            return Err(bad());
        }
        Ok(Ecn::Red {
            min_bytes,
            max_bytes,
            max_probability,
        })
    }
}

/// Priority flow control on the data class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcSetting {
    /// Lossy.
    Off,
    /// On, with the preset's thresholds (or the default XOFF 200,000 B, XON 180,000 B).
    On,
    /// On, with these thresholds per ingress link.
    Thresholds {
        /// Pause above this many bytes.
        xoff_bytes: u64,
        /// Resume at or below this many bytes (at most `xoff_bytes`).
        xon_bytes: u64,
    },
}

impl FromStr for PfcSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(PfcSetting::Off),
            "on" => Ok(PfcSetting::On),
            _ => {
                let (xoff_bytes, xon_bytes) =
                    parse_thresholds(s).map_err(|e| format!("{e}, on or off"))?;
                Ok(PfcSetting::Thresholds {
                    xoff_bytes,
                    xon_bytes,
                })
            }
        }
    }
}

/// PFC's `XOFF:XON` in bytes per ingress link (XON at most XOFF); the error says how to
/// write it.
pub fn parse_thresholds(v: &str) -> Result<(u64, u64), String> {
    let bad = || {
        "give XOFF:XON in bytes per ingress link (e.g. 200000:180000, XON at most \
             XOFF)"
            .to_owned()
    };
    let (xoff, xon): (u64, u64) = pair(v).ok_or_else(bad)?;
    if xon > xoff {
        return Err(bad());
    }
    Ok((xoff, xon))
}

/// PFC headroom above XOFF per ingress link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Headroom {
    /// Each link's own need, from its rate and delay.
    Auto,
    /// That need, shared out of each switch's HBM + SRAM.
    Buffer,
    /// This many bytes on every link.
    Bytes(u64),
}

impl FromStr for Headroom {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Headroom::Auto),
            "buffer" => Ok(Headroom::Buffer),
            _ => s.trim().parse().map(Headroom::Bytes).map_err(|_| {
                "give auto (each link's need), buffer (that need, shared out of \
                     each switch's HBM + SRAM) or bytes above XOFF per ingress link"
                    .to_owned()
            }),
        }
    }
}

/// Receiver-driven admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdmissionSetting {
    /// Senders start at will.
    Off,
    /// On, with the preset's chunks and window (or 512 KiB chunks, 2 outstanding).
    On,
    /// On, with these.
    Window {
        /// Payload bytes one clear-to-send covers (at least 1).
        chunk_bytes: u64,
        /// Chunks outstanding per receiver (at least 1).
        window: u32,
    },
}

impl FromStr for AdmissionSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(AdmissionSetting::Off),
            "on" => Ok(AdmissionSetting::On),
            _ => match pair::<u64, u32>(s) {
                Some((chunk_bytes, window)) if chunk_bytes > 0 && window > 0 => {
                    Ok(AdmissionSetting::Window {
                        chunk_bytes,
                        window,
                    })
                }
                _ => Err(
                    "give on, off or CHUNK:WINDOW (payload bytes a clear-to-send \
                     covers, chunks outstanding per receiver; e.g. 524288:2)"
                        .to_owned(),
                ),
            },
        }
    }
}

/// `A:B`, each side parsed (spaces around either ignored).
fn pair<A: FromStr, B: FromStr>(v: &str) -> Option<(A, B)> {
    let (a, b) = v.split_once(':')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The packet engine's settings as a user gives them (the CLI's flags, the Python keywords):
/// a preset, then each setting given on top of it. `None` keeps the preset's (or the
/// default's) value. The study's seed and switch latency ([`crate::Setup`]) are not here:
/// [`PacketOptions::config`] takes them from the setup the run belongs to.
#[derive(Clone, Debug, Default)]
pub struct PacketOptions {
    /// `None`: [`Config::default`].
    pub preset: Option<Preset>,
    /// The load-balancing mode: one the packet engine runs (`ecmp`, `spray[:N]`,
    /// `mixed:N`, `adaptive`); the others are refused with the list.
    pub lb: Option<Lb>,
    /// The senders' congestion control.
    pub cc: Option<CcChoice>,
    /// NSCC's base RTT and window.
    pub nscc_base_rtt: Option<BaseRtt>,
    /// MTU on the wire, bytes.
    pub mtu_bytes: Option<u32>,
    /// Data-class queue per port, bytes.
    pub queue_bytes: Option<u64>,
    /// ECN marking.
    pub ecn: Option<Ecn>,
    /// Trim (true) or drop (false) what does not fit.
    pub trim: Option<bool>,
    /// ACK every this many bytes (0: every packet).
    pub ack_bytes: Option<u32>,
    /// One latency for every link, microseconds.
    pub link_latency_us: Option<f64>,
    /// Retransmission timeout, microseconds.
    pub rto_us: Option<f64>,
    /// Stop at this simulated time, microseconds (default: when every flow is done).
    pub end_us: Option<f64>,
    /// Priority flow control.
    pub pfc: Option<PfcSetting>,
    /// PFC headroom above XOFF per ingress link (PFC must be on).
    pub pfc_headroom: Option<Headroom>,
    /// Receiver-driven admission.
    pub admission: Option<AdmissionSetting>,
    /// DSF zones: largest cell, bytes (default 256); the packet engine's only (the hybrid
    /// crosses the fabric in whole packets, [`aifabric_packet::Dsf::cell_bytes`]).
    pub dsf_cell_bytes: Option<u32>,
    /// DSF zones: one credit, bytes (default 4,096).
    pub dsf_credit_bytes: Option<u32>,
    /// Parts the fabric is cut into, run side by side (default 1; [`Config::partitions`]).
    pub partitions: Option<u32>,
    /// The random draws' own seed, the paths staying the seed's ([`Config::draw_seed`]).
    pub draw_seed: Option<u64>,
}

/// Largest switch or link latency, microseconds (1 s): a switch forwards in about 1 us, a
/// cable across a region delays by about 1 ms; beyond, the value is a mistake, and a huge
/// one would overflow the times it is added to.
pub const MAX_LATENCY_US: f64 = 1e6;

/// Largest timer or end time, microseconds (1,000 s of simulated time).
const MAX_TIMER_US: f64 = 1e9;

/// `us` microseconds in picoseconds, or a refusal naming `what` and the range 0 to `max_us`.
fn us_to_ps(what: &str, us: f64, max_us: f64) -> Result<u64, Error> {
    if (0.0..=max_us).contains(&us) {
        Ok((us * 1e6).round() as u64)
    } else {
        Err(Error::bad_request(format!(
            "{what} {}: give microseconds from 0 to {max_us:e}",
            crate::size::short_number(us)
        )))
    }
}

impl PacketOptions {
    /// Refuse a setting `engine` would not use: a cell size under the hybrid, which crosses
    /// a DSF fabric in whole packets.
    pub fn check_engine(&self, engine: crate::Engine) -> Result<(), Error> {
        if engine == crate::Engine::Hybrid && self.dsf_cell_bytes.is_some() {
            return Err(Error::bad_request(
                "the hybrid crosses a DSF fabric in whole packets (its credits keep the \
                 fabric from queueing), so a cell size changes nothing there; leave out the \
                 DSF cell size, or run the cells with --engine packet"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// The engine's configuration: the preset, these options on top, and the seed and
    /// switch latency of `seed` and `switch_latency_us` when given (the study's, which
    /// otherwise keep the preset's); or what is wrong and how to write it.
    pub fn config(
        &self,
        seed: Option<u64>,
        switch_latency_us: Option<f64>,
    ) -> Result<Config, Error> {
        let mut c = match self.preset {
            None => Config::default(),
            Some(Preset::UecHtsim) => Config::uec_htsim(),
            Some(Preset::Roce) => Config::roce(),
        };
        if let Some(lb) = self.lb {
            c.lb = PacketLb::try_from(lb).map_err(Error::bad_request)?;
        }
        if let Some(mtu) = self.mtu_bytes {
            c.mtu_bytes = mtu;
        }
        c.cc = match self.cc {
            // The preset's NSCC was scaled for its MTU: another MTU rescales it.
            Some(CcChoice::Nscc) | None
                if matches!(c.cc, Cc::Nscc(_)) && self.mtu_bytes.is_some() =>
            {
                Cc::NsccAuto
            }
            Some(CcChoice::Nscc) if matches!(c.cc, Cc::Nscc(_)) => c.cc,
            Some(CcChoice::Nscc) => Cc::NsccAuto,
            Some(CcChoice::LineRate) => Cc::LineRate,
            Some(CcChoice::Dcqcn) => Cc::DcqcnAuto,
            Some(CcChoice::DcqcnHtsim) => Cc::DcqcnHtsimAuto,
            None => c.cc,
        };
        if let Some(b) = self.nscc_base_rtt {
            c.nscc_path_rtt = b == BaseRtt::Path;
        }
        if let Some(q) = self.queue_bytes {
            c.queue_bytes = q;
        }
        match self.ecn {
            None => {}
            Some(Ecn::Off) => c.ecn_bytes = None,
            Some(Ecn::Red {
                min_bytes,
                max_bytes,
                max_probability,
            }) => {
                c.ecn_bytes = Some((min_bytes, max_bytes));
                c.ecn_max_probability = max_probability;
            }
        }
        if let Some(t) = self.trim {
            c.trim = t;
        }
        if let Some(a) = self.ack_bytes {
            c.ack_every_bytes = a;
        }
        if let Some(l) = self.link_latency_us {
            c.link_latency_ps = Some(us_to_ps("--link-latency-us", l, MAX_LATENCY_US)?);
        }
        if let Some(l) = switch_latency_us {
            c.switch_latency_ps = us_to_ps("--switch-latency-us", l, MAX_LATENCY_US)?;
        }
        if let Some(r) = self.rto_us {
            c.rto_ps = us_to_ps("--rto-us", r, MAX_TIMER_US)?.max(1);
        }
        if let Some(s) = seed {
            c.seed = s;
        }
        if let Some(e) = self.end_us {
            c.end_ps = us_to_ps("--end-us", e, MAX_TIMER_US)?;
        }
        c.pfc = match self.pfc {
            None => c.pfc,
            Some(PfcSetting::Off) => None,
            Some(PfcSetting::On) => Some(c.pfc.unwrap_or_default()),
            Some(PfcSetting::Thresholds {
                xoff_bytes,
                xon_bytes,
            }) => Some(Pfc {
                xoff_bytes,
                xon_bytes,
                ..c.pfc.unwrap_or_default()
            }),
        };
        if let Some(h) = self.pfc_headroom {
            let Some(pfc) = c.pfc.as_mut() else {
                return Err(Error::bad_request(format!(
                    "--pfc-headroom {h}: PFC is off; add --pfc on (or --preset roce)"
                )));
            };
            pfc.buffer_limited = h == Headroom::Buffer;
            pfc.headroom_bytes = match h {
                Headroom::Auto | Headroom::Buffer => None,
                Headroom::Bytes(b) => Some(b),
            };
        }
        c.admission = match self.admission {
            None => c.admission,
            Some(AdmissionSetting::Off) => None,
            Some(AdmissionSetting::On) => Some(c.admission.unwrap_or_default()),
            Some(AdmissionSetting::Window {
                chunk_bytes,
                window,
            }) => Some(Admission {
                chunk_bytes,
                window,
            }),
        };
        for (flag, v, field) in [
            (
                "--dsf-cell-bytes",
                self.dsf_cell_bytes,
                &mut c.dsf.cell_bytes,
            ),
            (
                "--dsf-credit-bytes",
                self.dsf_credit_bytes,
                &mut c.dsf.credit_bytes,
            ),
        ] {
            match v {
                Some(0) => {
                    return Err(Error::bad_request(format!(
                        "{flag} 0: give a size in bytes, at least 1"
                    )))
                }
                Some(b) => *field = b,
                None => {}
            }
        }
        match self.partitions {
            Some(n) if !(1..=aifabric_packet::MAX_PARTITIONS).contains(&n) => {
                return Err(Error::bad_request(format!(
                    "--partitions {n}: give 1 to {} (1: one engine for the whole fabric)",
                    aifabric_packet::MAX_PARTITIONS
                )))
            }
            Some(n) => c.partitions = n,
            None => {}
        }
        if self.draw_seed.is_some() {
            c.draw_seed = self.draw_seed;
        }
        if c.pfc.is_some() && c.trim {
            // A lossless class is never full: nothing to trim. Say so rather than ignore it.
            if self.trim == Some(true) {
                return Err(Error::bad_request(
                    "--trim with --pfc: a lossless data class never overflows, so nothing \
                     is trimmed; drop --trim (or turn PFC off)"
                        .to_owned(),
                ));
            }
            c.trim = false;
        }
        Ok(c)
    }
}

impl fmt::Display for Headroom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Headroom::Auto => f.write_str("auto"),
            Headroom::Buffer => f.write_str("buffer"),
            Headroom::Bytes(b) => write!(f, "{b}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_refuse_with_the_way_to_write_them() {
        assert_eq!("roce".parse(), Ok(Preset::Roce));
        assert!("ns3"
            .parse::<Preset>()
            .unwrap_err()
            .contains("uec-htsim, roce"));
        assert_eq!("dcqcn-htsim".parse(), Ok(CcChoice::DcqcnHtsim));
        assert_eq!("path".parse(), Ok(BaseRtt::Path));
        assert_eq!(
            "5000:200000:0.01".parse(),
            Ok(Ecn::Red {
                min_bytes: 5000,
                max_bytes: 200_000,
                max_probability: 0.01
            })
        );
        for bad in ["9", "1:2:3", "1:2:0", "a:b", "1:2:0.5:4"] {
            assert!(bad.parse::<Ecn>().unwrap_err().contains("MIN:MAX"), "{bad}");
        }
        assert_eq!(
            "200000:180000".parse(),
            Ok(PfcSetting::Thresholds {
                xoff_bytes: 200_000,
                xon_bytes: 180_000
            })
        );
        assert!("1:2"
            .parse::<PfcSetting>()
            .unwrap_err()
            .contains("XON at most XOFF"));
        assert_eq!("8320".parse(), Ok(Headroom::Bytes(8320)));
        assert!("x".parse::<Headroom>().unwrap_err().contains("auto"));
        assert!("0:2"
            .parse::<AdmissionSetting>()
            .unwrap_err()
            .contains("CHUNK:WINDOW"));
        assert_eq!(
            " 524288 : 2 ".parse(),
            Ok(AdmissionSetting::Window {
                chunk_bytes: 524_288,
                window: 2
            })
        );
    }

    #[test]
    fn a_new_mtu_rescales_the_presets_nscc_unless_cc_is_given_otherwise() {
        let uec = PacketOptions {
            preset: Some(Preset::UecHtsim),
            ..PacketOptions::default()
        };
        assert!(matches!(uec.config(None, None).unwrap().cc, Cc::Nscc(_)));
        let mtu = PacketOptions {
            mtu_bytes: Some(9000),
            ..uec.clone()
        };
        assert_eq!(mtu.config(None, None).unwrap().cc, Cc::NsccAuto);
        let line = PacketOptions {
            cc: Some(CcChoice::LineRate),
            ..mtu
        };
        assert_eq!(line.config(None, None).unwrap().cc, Cc::LineRate);
        // The study's seed and switch latency win over the preset's.
        let c = uec.config(Some(7), Some(0.5)).unwrap();
        assert_eq!((c.seed, c.switch_latency_ps), (7, 500_000));
    }
}
