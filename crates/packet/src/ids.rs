//! Typed ids of the engine's tables, over a `NonMaxU32` ([`aifabric_model::id_type!`]):
//! `Option<Id>` is 4 bytes and "none" is `None`, never a sentinel. Devices are the model's
//! [`aifabric_model::DeviceId`].

aifabric_model::id_type!(
    /// A packet's slot in the packet arena ([`crate::packet::Packets`]).
    PacketId
);
aifabric_model::id_type!(
    /// A directed link: a NIC, a switch's egress port, or a DSF fabric port.
    PortId
);
aifabric_model::id_type!(
    /// A flow of the matrix, in matrix order.
    FlowId
);
aifabric_model::id_type!(
    /// A host: a node of the matrix (a GPU's NIC).
    HostId
);
aifabric_model::id_type!(
    /// A switch's compact index among those the matrix's paths cross.
    SwitchId
);
aifabric_model::id_type!(
    /// A destination rack (the rack switch of some host the matrix sends to).
    DestId
);
aifabric_model::id_type!(
    /// A cell crossing a DSF fabric.
    CellId
);
aifabric_model::id_type!(
    /// A virtual output queue of a DSF interface node.
    VoqId
);
aifabric_model::id_type!(
    /// A DSF egress port's credit scheduler.
    SchedId
);
aifabric_model::id_type!(
    /// An ACK's list of the packets it covers, in the SACK pool.
    SackId
);
aifabric_model::id_type!(
    /// A node (interface or fabric) of the DSF zones a matrix crosses, in compact order.
    NodeId
);
