//! [`Message`]: the parts of a request a signature may cover, as web-bot-auth asks for them.

use http::header::HOST;
use http::{HeaderMap, Method, Uri};
use sfv::SerializeValue;
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParameters,
};
use web_bot_auth::message_signatures::SignedMessage;

/// A request as a signature sees it.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    /// The request's method.
    pub method: &'a Method,
    /// The request target (path and query; an absolute form's authority too).
    pub uri: &'a Uri,
    /// The authority the client asked for (`:authority`, else `Host`), as sent.
    pub authority: Option<&'a str>,
    /// The request's header fields.
    pub headers: &'a HeaderMap,
}

impl<'a> Message<'a> {
    /// The request of `method`, `uri` and `headers`; its authority is the URI's, else the
    /// `Host` header's.
    pub fn new(method: &'a Method, uri: &'a Uri, headers: &'a HeaderMap) -> Self {
        let authority = uri
            .authority()
            .map(|a| a.as_str())
            .or_else(|| headers.get(HOST)?.to_str().ok());
        Self {
            method,
            uri,
            authority,
            headers,
        }
    }

    /// Whether the request offers a Web Bot Auth signature: a `Signature` and a
    /// `Signature-Input` that names the tag `web-bot-auth` (other uses of HTTP signatures are
    /// none of this room's business).
    pub fn offers_signature(&self) -> bool {
        let tagged = self
            .headers
            .get_all("signature-input")
            .iter()
            .any(|v| v.as_bytes().windows(12).any(|w| w == b"web-bot-auth"));
        tagged && self.headers.contains_key("signature")
    }

    /// The values of header `name` (one per field line).
    fn field(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    /// A field's value as a component: plain, or one member of a dictionary (`;key="…"`);
    /// other parameters are not supported (nothing: the signature cannot be checked).
    fn component(&self, field: &HTTPField) -> Vec<String> {
        match field.parameters.0.as_slice() {
            [] => self.field(&field.name),
            [HTTPFieldParameters::Key(key)] => self.member(&field.name, key).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Member `key` of dictionary field `name`, serialized (RFC 9421 §2.1.2).
    fn member(&self, name: &str, key: &str) -> Option<String> {
        let joined = self.field(name).join(", ");
        let dictionary = sfv::Parser::new(&joined).parse_dictionary().ok()?;
        let entry = dictionary.into_iter().find(|(k, _)| k.as_str() == key)?.1;
        match entry {
            sfv::ListEntry::Item(item) => Some(item.serialize_value()),
            sfv::ListEntry::InnerList(list) => {
                vec![sfv::ListEntry::InnerList(list)].serialize_value()
            }
        }
    }

    /// A derived component's value (RFC 9421 §2.2); `@target-uri` and `@scheme` need the
    /// scheme, which is not known here: nothing.
    fn derived(&self, component: &DerivedComponent) -> Option<String> {
        Some(match component {
            DerivedComponent::Authority { req: false } => self.authority?.to_ascii_lowercase(),
            DerivedComponent::Method { req: false } => self.method.as_str().to_owned(),
            DerivedComponent::Path { req: false } => match self.uri.path() {
                "" => "/".to_owned(),
                path => path.to_owned(),
            },
            DerivedComponent::Query { req: false } => format!("?{}", self.uri.query()?),
            DerivedComponent::RequestTarget { req: false } => {
                self.uri.path_and_query()?.to_string()
            }
            _ => return None,
        })
    }
}

impl SignedMessage for Message<'_> {
    fn lookup_component(&self, name: &CoveredComponent) -> Vec<String> {
        match name {
            CoveredComponent::HTTP(field) => self.component(field),
            CoveredComponent::Derived(component) => self.derived(component).into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use web_bot_auth::components::HTTPFieldParametersSet;

    fn field(name: &str, parameters: Vec<HTTPFieldParameters>) -> CoveredComponent {
        CoveredComponent::HTTP(HTTPField {
            name: name.to_owned(),
            parameters: HTTPFieldParametersSet(parameters),
        })
    }

    #[test]
    fn components_come_from_the_request() {
        let (method, uri) = (Method::GET, "/a/b?x=1".parse::<Uri>().unwrap());
        let mut headers = HeaderMap::new();
        headers.insert(HOST, "Example.COM:8443".parse().unwrap());
        headers.insert(
            "signature-agent",
            r#"agent1="https://a.example", agent2="https://b.example""#
                .parse()
                .unwrap(),
        );
        let message = Message::new(&method, &uri, &headers);
        let derived = |c| message.lookup_component(&CoveredComponent::Derived(c));
        assert_eq!(
            derived(DerivedComponent::Authority { req: false }),
            ["example.com:8443"]
        );
        assert_eq!(derived(DerivedComponent::Method { req: false }), ["GET"]);
        assert_eq!(derived(DerivedComponent::Path { req: false }), ["/a/b"]);
        assert_eq!(derived(DerivedComponent::Query { req: false }), ["?x=1"]);
        assert!(derived(DerivedComponent::Scheme { req: false }).is_empty());
        let keyed = field(
            "signature-agent",
            vec![HTTPFieldParameters::Key("agent2".into())],
        );
        assert_eq!(message.lookup_component(&keyed), [r#""https://b.example""#]);
        assert!(message
            .lookup_component(&field("signature-agent", vec![HTTPFieldParameters::Bs]))
            .is_empty());
    }

    #[test]
    fn only_web_bot_auth_signatures_are_offered() {
        let (method, uri) = (Method::GET, Uri::from_static("/"));
        let mut headers = HeaderMap::new();
        headers.insert("signature", "sig1=:AAAA:".parse().unwrap());
        headers.insert(
            "signature-input",
            r#"sig1=("@method");tag="other""#.parse().unwrap(),
        );
        assert!(!Message::new(&method, &uri, &headers).offers_signature());
        headers.insert(
            "signature-input",
            r#"sig1=("@authority");tag="web-bot-auth""#.parse().unwrap(),
        );
        assert!(Message::new(&method, &uri, &headers).offers_signature());
        headers.remove("signature");
        assert!(!Message::new(&method, &uri, &headers).offers_signature());
    }
}
