//! The pages: plain HTML, CSS and JavaScript, embedded in the binary with `include_str!`
//! and served from memory. They load nothing from the network (no CDN, no fonts) and call
//! only this server's API. No request path reaches the filesystem.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

/// (path, content type, bytes).
const ASSETS: &[(&str, &str, &str)] = &[
    ("/", "text/html; charset=utf-8", include_str!("../assets/index.html")),
    ("/roce", "text/html; charset=utf-8", include_str!("../assets/roce.html")),
    ("/design", "text/html; charset=utf-8", include_str!("../assets/design.html")),
    ("/burst", "text/html; charset=utf-8", include_str!("../assets/burst.html")),
    ("/scenario", "text/html; charset=utf-8", include_str!("../assets/scenario.html")),
    ("/app.css", "text/css; charset=utf-8", include_str!("../assets/app.css")),
    ("/app.js", "text/javascript; charset=utf-8", include_str!("../assets/app.js")),
];

/// One GET route per asset.
pub fn routes() -> Router<crate::State> {
    ASSETS.iter().fold(Router::new(), |r, &(path, ty, body)| {
        r.route(path, get(move || async move { ([(header::CONTENT_TYPE, ty), (header::CACHE_CONTROL, "no-cache")], body).into_response() }))
    })
}
