//! `fabriclab serve`: the planners (and their API) in a browser, on 127.0.0.1 unless
//! `--bind` says otherwise (with a warning). The server is the `web` crate; this file only
//! reads the flags.

use std::net::IpAddr;
use std::process::ExitCode;

use clap::Args;

/// `fabriclab serve` arguments.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// TCP port (0: any free one; the address is printed).
    #[arg(long, default_value = "8080")]
    pub port: u16,
    /// Address to listen on; anything but a loopback address reaches other machines.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Open the app in the desktop's browser.
    #[arg(long)]
    pub open: bool,
}

pub fn run(a: ServeArgs) -> ExitCode {
    match web::serve(&web::Options { bind: a.bind, port: a.port, open: a.open }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
