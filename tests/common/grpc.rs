//! A gRPC backend and client built on tonic, with no code generation: messages are raw bytes
//! (a codec that copies them), the one method is `/echo.Echo/Say`, which answers
//! `hello <message>`. The server speaks HTTP/2 in cleartext (h2c), on its own runtime, and
//! stops when dropped.

use bytes::{Buf, BufMut, Bytes};
use std::convert::Infallible;
use std::thread::JoinHandle;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Request, Response, Status};

/// The path of the one method.
pub const SAY: &str = "/echo.Echo/Say";

/// Messages as raw bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

pub struct GrpcBackend {
    pub addr: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl GrpcBackend {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the gRPC backend");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("gRPC runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let incoming = tonic::transport::server::TcpIncoming::from(listener);
                let service = tower::service_fn(route);
                let _ = tonic::transport::Server::builder()
                    .serve_with_incoming_shutdown(service, incoming, async {
                        let _ = stop.await;
                    })
                    .await;
            });
        });
        Self {
            addr,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }
}

/// Routes a call: `Say` to its handler, anything else `UNIMPLEMENTED`.
async fn route(
    req: http::Request<tonic::body::Body>,
) -> Result<http::Response<tonic::body::Body>, Infallible> {
    if req.uri().path() != SAY {
        return Ok(Status::unimplemented("no such method").into_http());
    }
    let say = tower::service_fn(|call: Request<Bytes>| async move {
        let mut reply = b"hello ".to_vec();
        reply.extend_from_slice(call.get_ref());
        Ok::<_, Status>(Response::new(Bytes::from(reply)))
    });
    Ok(tonic::server::Grpc::new(RawCodec).unary(say, req).await)
}

/// Calls `Say` with `message` through `url` (`http://host:port`, HTTP/2 with prior
/// knowledge), with `metadata` headers: the answer, or the status the call failed with.
pub async fn say(
    url: &str,
    message: &str,
    metadata: &[(&'static str, &str)],
) -> Result<Bytes, Status> {
    let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
        .map_err(|e| Status::internal(e.to_string()))?
        .connect()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let mut client = tonic::client::Grpc::new(channel);
    client
        .ready()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let mut request = Request::new(Bytes::from(message.to_owned()));
    for (name, value) in metadata {
        let value = value.parse().map_err(|_| Status::internal("metadata"))?;
        request.metadata_mut().insert(*name, value);
    }
    let path = http::uri::PathAndQuery::from_static(SAY);
    let response = client.unary(request, path, RawCodec).await?;
    Ok(response.into_inner())
}

impl Drop for GrpcBackend {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
