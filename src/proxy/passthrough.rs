//! The pingora stream traits a wrapper of a downstream stream passes through to the stream it
//! wraps (its `inner` field) unchanged: a wrapper writes out only what it changes (reads,
//! writes, peeks) and says `pass_stream_traits!(Wrapper)` for the rest.

/// Implements `Shutdown`, `UniqueID`, `Ssl`, `GetTimingDigest`, `GetProxyDigest` and
/// `GetSocketDigest` for `$wrapper` by passing each call to its `inner` stream.
macro_rules! pass_stream_traits {
    ($wrapper:ty) => {
        #[async_trait::async_trait]
        impl pingora::protocols::Shutdown for $wrapper {
            async fn shutdown(&mut self) {
                pingora::protocols::Shutdown::shutdown(&mut *self.inner).await
            }
        }

        impl pingora::protocols::UniqueID for $wrapper {
            fn id(&self) -> pingora::protocols::UniqueIDType {
                pingora::protocols::UniqueID::id(&*self.inner)
            }
        }

        impl pingora::protocols::Ssl for $wrapper {
            fn get_ssl(&self) -> Option<&pingora::protocols::tls::TlsRef> {
                pingora::protocols::Ssl::get_ssl(&*self.inner)
            }

            fn get_ssl_digest(&self) -> Option<std::sync::Arc<pingora::protocols::tls::SslDigest>> {
                pingora::protocols::Ssl::get_ssl_digest(&*self.inner)
            }

            fn selected_alpn_proto(&self) -> Option<pingora::protocols::ALPN> {
                pingora::protocols::Ssl::selected_alpn_proto(&*self.inner)
            }
        }

        impl pingora::protocols::GetTimingDigest for $wrapper {
            fn get_timing_digest(&self) -> Vec<Option<pingora::protocols::TimingDigest>> {
                pingora::protocols::GetTimingDigest::get_timing_digest(&*self.inner)
            }

            fn get_read_pending_time(&self) -> std::time::Duration {
                pingora::protocols::GetTimingDigest::get_read_pending_time(&*self.inner)
            }

            fn get_write_pending_time(&self) -> std::time::Duration {
                pingora::protocols::GetTimingDigest::get_write_pending_time(&*self.inner)
            }
        }

        impl pingora::protocols::GetProxyDigest for $wrapper {
            fn get_proxy_digest(
                &self,
            ) -> Option<std::sync::Arc<pingora::protocols::raw_connect::ProxyDigest>> {
                pingora::protocols::GetProxyDigest::get_proxy_digest(&*self.inner)
            }

            fn set_proxy_digest(&mut self, digest: pingora::protocols::raw_connect::ProxyDigest) {
                pingora::protocols::GetProxyDigest::set_proxy_digest(&mut *self.inner, digest)
            }
        }

        impl pingora::protocols::GetSocketDigest for $wrapper {
            fn get_socket_digest(
                &self,
            ) -> Option<std::sync::Arc<pingora::protocols::SocketDigest>> {
                pingora::protocols::GetSocketDigest::get_socket_digest(&*self.inner)
            }

            fn set_socket_digest(&mut self, digest: pingora::protocols::SocketDigest) {
                pingora::protocols::GetSocketDigest::set_socket_digest(&mut *self.inner, digest)
            }
        }
    };
}

pub(super) use pass_stream_traits;
