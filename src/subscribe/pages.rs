//! The pages of the pricing site, rendered on the server: plain HTML with its style
//! inline, no script and nothing loaded from elsewhere, so they work offline and on a
//! phone. Every value from outside goes through [`esc`].

use std::fmt::Write as _;

use super::plans::Plan;
use super::settings::Settings;
use crate::text::count;

/// Text made safe for HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1c2430;background:#f6f7f9;line-height:1.5}
main{max-width:60rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.2rem;margin-top:2rem}
.plans{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem}
.plan{background:#fff;border:1px solid #d5dae1;border-radius:.5rem;padding:1rem}
.price{font-size:1.3rem;font-weight:600}
form{background:#fff;border:1px solid #d5dae1;border-radius:.5rem;padding:1rem;max-width:32rem}
label{display:block;margin:.6rem 0 .2rem;font-weight:600}
input[type=text],input[type=email],select{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem;border:1px solid #b8c0cc;border-radius:.3rem}
.check label{display:inline;font-weight:normal}
button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem;border:0;border-radius:.3rem;background:#0b5cad;color:#fff}
code{background:#eceff3;padding:.1rem .3rem;border-radius:.2rem}
.note{color:#4a5566}
";

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · racing data</title><style>{STYLE}</style></head>\
         <body><main>{body}</main></body></html>\n",
        esc(title)
    )
}

/// How to reach the operator, as HTML: a `mailto:` link for an e-mail address, a link
/// for a web address, the text as it is otherwise.
fn contact_html(contact: &str) -> String {
    let web = contact.starts_with("https://") || contact.starts_with("http://");
    let mail = !web && contact.contains('@') && !contact.contains([' ', ':', '<', '>']);
    match (web, mail) {
        (true, _) => format!("<a href=\"{0}\">{0}</a>", esc(contact)),
        (_, true) => format!("<a href=\"mailto:{0}\">{0}</a>", esc(contact)),
        _ => esc(contact),
    }
}

fn plan_card(plan: &Plan, contact: Option<&str>) -> String {
    let how = match contact {
        _ if plan.self_service => "Subscribe below".to_owned(),
        Some(contact) => format!("To subscribe, contact {}", contact_html(contact)),
        None => "To subscribe, contact the operator of this service".to_owned(),
    };
    format!(
        "<div class=\"plan\"><h3>{}</h3><p class=\"price\">{}</p><p>{}</p>\
         <ul><li>{}, bursts of {}</li><li>{}</li></ul>\
         <p class=\"note\">{how}</p></div>",
        esc(&plan.name),
        esc(&plan.price),
        esc(&plan.description),
        count(plan.rate_per_sec, "request a second", "requests a second"),
        plan.burst,
        count(
            plan.live_connections,
            "live odds connection",
            "live odds connections"
        ),
    )
}

/// The pricing page of `settings`' plans: the plans, how to reach the operator for those
/// sold by contact, the subscribe form and the lost-key form, each with the CSRF token
/// `token`, and an example request at the site's own address.
pub fn pricing(settings: &Settings, token: &str, docs: &str) -> String {
    let plans = &settings.plans;
    let contact = settings.contact.as_deref();
    let mut body = String::from(
        "<h1>Horse racing data: results, form, cards and live odds</h1>\
         <p>A JSON API over HTTP for Hong Kong racing (horse profiles and form, results by \
         date and by race, race cards) and a live odds WebSocket. Every request carries your \
         API key in the <code>X-API-Key</code> header.</p>",
    );
    let _ = write!(
        body,
        "<p><a href=\"{}\">API documentation</a></p><h2>Plans</h2><div class=\"plans\">",
        esc(docs)
    );
    for plan in plans.all() {
        body.push_str(&plan_card(plan, contact));
    }
    body.push_str("</div><h2 id=\"subscribe\">Subscribe</h2>");
    let options: String = plans
        .all()
        .iter()
        .filter(|p| p.self_service)
        .map(|p| {
            format!(
                "<option value=\"{}\">{} ({})</option>",
                esc(&p.id),
                esc(&p.name),
                esc(&p.price)
            )
        })
        .collect();
    let _ = write!(
        body,
        "<form method=\"post\" action=\"/subscribe\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{token}\">\
         <label for=\"name\">Name or company</label>\
         <input type=\"text\" id=\"name\" name=\"name\" required maxlength=\"100\" autocomplete=\"organization\">\
         <label for=\"email\">E-mail</label>\
         <input type=\"email\" id=\"email\" name=\"email\" required maxlength=\"254\" autocomplete=\"email\">\
         <label for=\"plan\">Plan</label><select id=\"plan\" name=\"plan\">{options}</select>\
         <p class=\"check\"><input type=\"checkbox\" id=\"terms\" name=\"terms\" value=\"yes\" required> \
         <label for=\"terms\">I accept the terms of use: the data is for my own products, not for resale.</label></p>\
         <button type=\"submit\">Subscribe</button>\
         <p class=\"note\">We send a link to confirm the address; your key comes in the next \
         message. We keep your name, address, plan and key prefix while you subscribe.</p></form>",
        token = esc(token)
    );
    let _ = write!(
        body,
        "<h2 id=\"replace\">Lost or compromised key</h2>\
         <form method=\"post\" action=\"/keys/replace\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{token}\">\
         <label for=\"replace-email\">E-mail you subscribed with</label>\
         <input type=\"email\" id=\"replace-email\" name=\"email\" required maxlength=\"254\" autocomplete=\"email\">\
         <p class=\"check\"><input type=\"checkbox\" id=\"compromised\" name=\"compromised\" value=\"yes\"> \
         <label for=\"compromised\">Someone else may have it: stop the old key at once</label></p>\
         <button type=\"submit\">Send me a new key</button>\
         <p class=\"note\">Without that box the old key keeps working for a day, so you can \
         deploy the new one first.</p></form>\
         <h2>Using a key</h2><pre><code>curl -H 'X-API-Key: YOUR_KEY' \
         {site}/api/v1/racecards/today</code></pre>",
        token = esc(token),
        site = esc(settings.public_url.trim_end_matches('/')),
    );
    page("Pricing", &body)
}

/// A page with a heading and a paragraph of text (escaped).
pub fn message(title: &str, text: &str) -> String {
    page(
        title,
        &format!(
            "<h1>{}</h1><p>{}</p><p><a href=\"/\">Back to the plans</a></p>",
            esc(title),
            esc(text)
        ),
    )
}

/// The page a link in an e-mail opens: one button, so that a mail scanner that fetches
/// the link does not use it up; with `offer_stop` (a replacement that leaves the current
/// keys a grace period), a box to stop them at once instead.
pub fn confirm(
    title: &str,
    text: &str,
    action: &str,
    link: &str,
    token: &str,
    offer_stop: bool,
) -> String {
    let stop = if offer_stop {
        "<p class=\"check\"><input type=\"checkbox\" id=\"compromised\" name=\"compromised\" value=\"yes\"> \
         <label for=\"compromised\">Someone else may have them: stop the current keys at once</label></p>"
    } else {
        ""
    };
    page(
        title,
        &format!(
            "<h1>{}</h1><p>{}</p><form method=\"post\" action=\"{}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <input type=\"hidden\" name=\"token\" value=\"{}\">{stop}\
             <button type=\"submit\">{}</button></form>",
            esc(title),
            esc(text),
            esc(action),
            esc(token),
            esc(link),
            esc(title)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_text_cannot_make_markup() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
        let page = message("Hello <b>", "x<y");
        assert!(page.contains("Hello &lt;b&gt;") && page.contains("x&lt;y"));
        assert!(!page.contains("<script") && !page.contains("http"));
    }

    /// The default settings of a site at `https://racing.example.com`, with `contact`.
    fn settings(contact: Option<&str>) -> Settings {
        let mut settings = crate::Config::new(std::path::Path::new("data"), None).signup;
        settings.public_url = "https://racing.example.com/".to_owned();
        settings.contact = contact.map(str::to_owned);
        settings
    }

    #[test]
    fn plans_sold_by_contact_say_whom_to_contact() {
        let page = pricing(&settings(Some("sales@racing.example.com")), "t", "/docs");
        assert!(
            page.contains(
                "To subscribe, contact <a href=\"mailto:sales@racing.example.com\">\
                 sales@racing.example.com</a>"
            ),
            "{page}"
        );
        let page = pricing(
            &settings(Some("https://racing.example.com/sales")),
            "t",
            "/docs",
        );
        assert!(
            page.contains("<a href=\"https://racing.example.com/sales\">"),
            "{page}"
        );
        let page = pricing(&settings(None), "t", "/docs");
        assert!(
            page.contains("To subscribe, contact the operator of this service"),
            "{page}"
        );
        assert!(!page.contains("Contact us"), "{page}");
    }

    #[test]
    fn the_pricing_page_s_example_calls_the_site_it_is_on() {
        let page = pricing(&settings(None), "t", "/docs");
        assert!(
            page.contains("https://racing.example.com/api/v1/racecards/today"),
            "{page}"
        );
        assert!(!page.contains("this-host"), "{page}");
    }

    #[test]
    fn counts_on_the_plans_read_right_for_one() {
        let mut settings = settings(None);
        let plans = "[[plan]]\nid = \"solo\"\nname = \"Solo\"\nprice = \"Free\"\n\
                     rate_per_sec = 1\nburst = 1\nlive_connections = 1\nself_service = true\n";
        settings.plans = super::super::plans::Plans::parse(plans).expect("a plan");
        let page = pricing(&settings, "t", "/docs");
        assert!(page.contains("1 request a second"), "{page}");
        assert!(page.contains("<li>1 live odds connection</li>"), "{page}");
    }

    #[test]
    fn the_pricing_page_has_labelled_fields_and_no_script() {
        let page = pricing(&settings(None), "t0k", "/api/v1/docs");
        for id in [
            "name",
            "email",
            "plan",
            "terms",
            "replace-email",
            "compromised",
        ] {
            assert!(page.contains(&format!("<label for=\"{id}\">")), "{id}");
            assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
        }
        assert!(!page.contains("<script") && !page.contains("src="));
        assert!(page.contains("name=\"viewport\""));
        assert!(page.contains("value=\"trial\""));
    }
}
