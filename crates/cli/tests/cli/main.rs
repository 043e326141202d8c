//! The integration tests of `aifabric-cli`, one binary (each module was its own binary).

mod budgets;
mod chakra;
mod cli;
mod cluster;
mod fault;
mod goodput;
mod lab;
mod names;
mod packet;
mod roce_bag;
mod slurm;
mod slurm_live;
mod stdout;
mod sweep;
mod ux;
