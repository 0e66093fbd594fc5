//! Static descriptions of protobuf services, emitted by `protozero-codegen`.
//!
//! Perfetto's IPC layer binds a service by name and then calls methods by a
//! numeric id that the host assigns: 1, 2, 3… in the order the methods are
//! declared in the `.proto` file. These tables carry exactly that, so the IPC
//! code can answer `BindService` and route `InvokeMethod` without reflection.

/// One RPC method of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodDescriptor {
    /// 1-based position of the method in its service's declaration order.
    pub id: u32,
    /// Method name as declared, e.g. `InitializeConnection`.
    pub name: &'static str,
    /// Fully qualified request message name, without a leading dot.
    pub input_type: &'static str,
    /// Fully qualified response message name, without a leading dot.
    pub output_type: &'static str,
    /// Whether the client sends a stream of requests.
    pub client_streaming: bool,
    /// Whether the server answers with a stream of responses.
    pub server_streaming: bool,
}

/// A service and its methods in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceDescriptor {
    /// Service name as declared, e.g. `ProducerPort`.
    pub name: &'static str,
    /// Fully qualified name, e.g. `perfetto.protos.ProducerPort`.
    pub full_name: &'static str,
    /// Methods; `methods[i].id == i + 1`.
    pub methods: &'static [MethodDescriptor],
}

impl ServiceDescriptor {
    /// The method with this name.
    pub fn method(&self, name: &str) -> Option<&'static MethodDescriptor> {
        self.methods.iter().find(|m| m.name == name)
    }

    /// The method with this 1-based id.
    pub fn method_by_id(&self, id: u32) -> Option<&'static MethodDescriptor> {
        let index = usize::try_from(id).ok()?.checked_sub(1)?;
        self.methods.get(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ECHO: ServiceDescriptor = ServiceDescriptor {
        name: "Echo",
        full_name: "test.Echo",
        methods: &[
            MethodDescriptor {
                id: 1,
                name: "Ping",
                input_type: "test.Req",
                output_type: "test.Resp",
                client_streaming: false,
                server_streaming: false,
            },
            MethodDescriptor {
                id: 2,
                name: "Watch",
                input_type: "test.Req",
                output_type: "test.Resp",
                client_streaming: false,
                server_streaming: true,
            },
        ],
    };

    #[test]
    fn lookup_by_name_and_id() {
        assert_eq!(ECHO.method("Watch").map(|m| m.id), Some(2));
        assert_eq!(ECHO.method_by_id(1).map(|m| m.name), Some("Ping"));
        assert!(ECHO.method_by_id(0).is_none());
        assert!(ECHO.method_by_id(3).is_none());
        assert!(ECHO.method("Nope").is_none());
    }
}
