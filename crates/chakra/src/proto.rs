//! The Chakra execution-trace messages (schema `et_def.proto`, package `ChakraProtoMsg`,
//! MLCommons Chakra), written from the schema's public field numbers and types as `prost`
//! derives: no `protoc`, no build script.
//!
//! Only what a replay needs is typed; the rest of a node (its `inputs` / `outputs` I/O info
//! and the storage detail) is kept as raw bytes so a read-write round trip is lossless.

use prost::Message;

/// `ChakraProtoMsg.NodeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum NodeType {
    /// Not set.
    InvalidNode = 0,
    /// Metadata.
    MetadataNode = 1,
    /// Memory load.
    MemLoadNode = 2,
    /// Memory store.
    MemStoreNode = 3,
    /// Computation.
    CompNode = 4,
    /// Point-to-point send.
    CommSendNode = 5,
    /// Point-to-point receive.
    CommRecvNode = 6,
    /// Collective.
    CommCollNode = 7,
    /// Storage operation.
    StorageNode = 8,
    /// Batch marker.
    BatchNode = 9,
    /// Checkpoint.
    CheckpointNode = 10,
}

/// `ChakraProtoMsg.CollectiveCommType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum CollectiveCommType {
    /// All-reduce.
    AllReduce = 0,
    /// Reduce to one rank.
    Reduce = 1,
    /// All-gather.
    AllGather = 2,
    /// Gather to one rank.
    Gather = 3,
    /// Scatter from one rank.
    Scatter = 4,
    /// Broadcast from one rank.
    Broadcast = 5,
    /// All-to-all.
    AllToAll = 6,
    /// Reduce-scatter.
    ReduceScatter = 7,
    /// Reduce-scatter with equal blocks.
    ReduceScatterBlock = 8,
    /// Barrier.
    Barrier = 9,
}

macro_rules! list {
    ($name:ident, $kind:ident, $ty:ty) => {
        /// A repeated attribute value.
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct $name {
            /// The values.
            #[prost($kind, repeated, tag = "1")]
            pub values: Vec<$ty>,
        }
    };
}
list!(DoubleList, double, f64);
list!(FloatList, float, f32);
list!(Int32List, int32, i32);
list!(Int64List, int64, i64);
list!(Uint32List, uint32, u32);
list!(Uint64List, uint64, u64);
list!(Sint32List, sint32, i32);
list!(Sint64List, sint64, i64);
list!(Fixed32List, fixed32, u32);
list!(Fixed64List, fixed64, u64);
list!(Sfixed32List, sfixed32, i32);
list!(Sfixed64List, sfixed64, i64);
list!(BoolList, bool, bool);
list!(StringList, string, String);

/// A repeated bytes attribute value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    /// The values.
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub values: Vec<Vec<u8>>,
}

/// `ChakraProtoMsg.AttributeProto`: a named value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// Name, e.g. `comm_type`.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Documentation.
    #[prost(string, tag = "2")]
    pub doc_string: String,
    /// The value.
    #[prost(
        oneof = "Value",
        tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
    )]
    pub value: Option<Value>,
}

/// The value of an attribute (`oneof value`).
#[allow(missing_docs)]
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "3")]
    DoubleVal(f64),
    #[prost(message, tag = "4")]
    DoubleList(DoubleList),
    #[prost(float, tag = "5")]
    FloatVal(f32),
    #[prost(message, tag = "6")]
    FloatList(FloatList),
    #[prost(int32, tag = "7")]
    Int32Val(i32),
    #[prost(message, tag = "8")]
    Int32List(Int32List),
    #[prost(int64, tag = "9")]
    Int64Val(i64),
    #[prost(message, tag = "10")]
    Int64List(Int64List),
    #[prost(uint32, tag = "11")]
    Uint32Val(u32),
    #[prost(message, tag = "12")]
    Uint32List(Uint32List),
    #[prost(uint64, tag = "13")]
    Uint64Val(u64),
    #[prost(message, tag = "14")]
    Uint64List(Uint64List),
    #[prost(sint32, tag = "15")]
    Sint32Val(i32),
    #[prost(message, tag = "16")]
    Sint32List(Sint32List),
    #[prost(sint64, tag = "17")]
    Sint64Val(i64),
    #[prost(message, tag = "18")]
    Sint64List(Sint64List),
    #[prost(fixed32, tag = "19")]
    Fixed32Val(u32),
    #[prost(message, tag = "20")]
    Fixed32List(Fixed32List),
    #[prost(fixed64, tag = "21")]
    Fixed64Val(u64),
    #[prost(message, tag = "22")]
    Fixed64List(Fixed64List),
    #[prost(sfixed32, tag = "23")]
    Sfixed32Val(i32),
    #[prost(message, tag = "24")]
    Sfixed32List(Sfixed32List),
    #[prost(sfixed64, tag = "25")]
    Sfixed64Val(i64),
    #[prost(message, tag = "26")]
    Sfixed64List(Sfixed64List),
    #[prost(bool, tag = "27")]
    BoolVal(bool),
    #[prost(message, tag = "28")]
    BoolList(BoolList),
    #[prost(string, tag = "29")]
    StringVal(String),
    #[prost(message, tag = "30")]
    StringList(StringList),
    #[prost(bytes = "vec", tag = "31")]
    BytesVal(Vec<u8>),
    #[prost(message, tag = "32")]
    BytesList(BytesList),
}

/// `ChakraProtoMsg.GlobalMetadata`: the first message of every file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    /// Schema version, e.g. `0.0.4`.
    #[prost(string, tag = "1")]
    pub version: String,
    /// Attributes.
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// `ChakraProtoMsg.IOInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IoInfo {
    /// Values.
    #[prost(string, tag = "1")]
    pub values: String,
    /// Shapes.
    #[prost(string, tag = "2")]
    pub shapes: String,
    /// Types.
    #[prost(string, tag = "3")]
    pub types: String,
}

/// `ChakraProtoMsg.Node`: one operation of one rank.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    /// Id, unique in its file.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Type ([`NodeType`]; unknown values are kept).
    #[prost(enumeration = "NodeType", tag = "3")]
    pub r#type: i32,
    /// Control dependencies (ids of this file).
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    /// Data dependencies (ids of this file).
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    /// Start, microseconds.
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    /// Duration, microseconds (0: not measured).
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    /// Inputs.
    #[prost(message, optional, tag = "8")]
    pub inputs: Option<IoInfo>,
    /// Outputs.
    #[prost(message, optional, tag = "9")]
    pub outputs: Option<IoInfo>,
    /// Attributes (`comm_type`, `comm_size`, `pg_name`, `num_ops`, ...).
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
    /// Storage detail of a storage node, kept as its encoded bytes.
    #[prost(bytes = "vec", optional, tag = "11")]
    pub storage: Option<Vec<u8>>,
}

/// The fields of a [`Node`] a replay needs, decoded without the name, the I/O info and the
/// storage detail (skipped undecoded: nothing allocated for them).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeCore {
    /// Id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Type.
    #[prost(enumeration = "NodeType", tag = "3")]
    pub r#type: i32,
    /// Control dependencies.
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    /// Data dependencies.
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    /// Duration, microseconds.
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    /// Attributes.
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

/// What the reader needs of a node message.
pub trait NodeMessage: Message + Default {
    /// Its id.
    fn node_id(&self) -> u64;
    /// Its raw type.
    fn raw_type(&self) -> i32;
}

impl NodeMessage for Node {
    fn node_id(&self) -> u64 {
        self.id
    }
    fn raw_type(&self) -> i32 {
        self.r#type
    }
}

impl NodeMessage for NodeCore {
    fn node_id(&self) -> u64 {
        self.id
    }
    fn raw_type(&self) -> i32 {
        self.r#type
    }
}

impl NodeCore {
    /// The node type, if it is one this reader knows.
    pub fn node_type(&self) -> Option<NodeType> {
        NodeType::try_from(self.r#type).ok()
    }
}

/// The highest field number of [`Node`] and [`GlobalMetadata`] this reader knows.
pub const NODE_FIELDS: u32 = 11;
/// Field numbers of [`GlobalMetadata`].
pub const METADATA_FIELDS: u32 = 2;

impl AttributeProto {
    /// An integer attribute (`int64_val`, Chakra's converters' choice).
    pub fn int(name: &str, v: i64) -> Self {
        AttributeProto {
            name: name.into(),
            doc_string: String::new(),
            value: Some(Value::Int64Val(v)),
        }
    }

    /// An unsigned attribute (`uint64_val`).
    pub fn uint(name: &str, v: u64) -> Self {
        AttributeProto {
            name: name.into(),
            doc_string: String::new(),
            value: Some(Value::Uint64Val(v)),
        }
    }

    /// A floating-point attribute (`double_val`).
    pub fn double(name: &str, v: f64) -> Self {
        AttributeProto {
            name: name.into(),
            doc_string: String::new(),
            value: Some(Value::DoubleVal(v)),
        }
    }

    /// A string attribute (`string_val`).
    pub fn string(name: &str, v: &str) -> Self {
        AttributeProto {
            name: name.into(),
            doc_string: String::new(),
            value: Some(Value::StringVal(v.into())),
        }
    }

    /// A boolean attribute (`bool_val`).
    pub fn boolean(name: &str, v: bool) -> Self {
        AttributeProto {
            name: name.into(),
            doc_string: String::new(),
            value: Some(Value::BoolVal(v)),
        }
    }

    /// The value as an unsigned integer, whichever scalar integer (or integral double) type
    /// the producer chose; `None` for negatives, lists, strings and fractions.
    pub fn as_u64(&self) -> Option<u64> {
        match self.value.as_ref()? {
            Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => {
                u64::try_from(*v).ok()
            }
            Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => {
                u64::try_from(*v).ok()
            }
            Value::Uint32Val(v) | Value::Fixed32Val(v) => Some(u64::from(*v)),
            Value::Uint64Val(v) | Value::Fixed64Val(v) => Some(*v),
            Value::DoubleVal(v) if *v >= 0.0 && v.fract() == 0.0 && *v < 1.8e19 => Some(*v as u64),
            Value::BoolVal(v) => Some(u64::from(*v)),
            _ => None,
        }
    }

    /// The value as written, for messages: a scalar as it is (a string quoted), else its kind
    /// (`a list`, `bytes`, `no value`).
    pub fn shown(&self) -> String {
        match &self.value {
            Some(Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v)) => v.to_string(),
            Some(Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v)) => v.to_string(),
            Some(Value::Uint32Val(v) | Value::Fixed32Val(v)) => v.to_string(),
            Some(Value::Uint64Val(v) | Value::Fixed64Val(v)) => v.to_string(),
            Some(Value::DoubleVal(v)) => v.to_string(),
            Some(Value::FloatVal(v)) => v.to_string(),
            Some(Value::BoolVal(v)) => v.to_string(),
            Some(Value::StringVal(s)) => format!("{s:?}"),
            Some(Value::BytesVal(_)) => "bytes".into(),
            Some(_) => "a list".into(),
            None => "no value".into(),
        }
    }

    /// The value as a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self.value.as_ref()? {
            Value::DoubleVal(v) => Some(*v),
            Value::FloatVal(v) => Some(f64::from(*v)),
            Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => Some(f64::from(*v)),
            Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => Some(*v as f64),
            Value::Uint32Val(v) | Value::Fixed32Val(v) => Some(f64::from(*v)),
            Value::Uint64Val(v) | Value::Fixed64Val(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// The value as text (`string_val`, or an integer printed, as some converters store
    /// `pg_name` as a number).
    pub fn as_text(&self) -> Option<String> {
        match self.value.as_ref()? {
            Value::StringVal(s) => Some(s.clone()),
            _ => self.as_u64().map(|v| v.to_string()),
        }
    }
}

/// Find an attribute by name.
pub fn attr<'a>(attrs: &'a [AttributeProto], name: &str) -> Option<&'a AttributeProto> {
    attrs.iter().find(|a| a.name == name)
}

impl Node {
    /// The node type, if it is one this reader knows.
    pub fn node_type(&self) -> Option<NodeType> {
        NodeType::try_from(self.r#type).ok()
    }
}

impl CollectiveCommType {
    /// Snake-case name, as in the schema.
    pub fn as_str(self) -> &'static str {
        match self {
            CollectiveCommType::AllReduce => "all_reduce",
            CollectiveCommType::Reduce => "reduce",
            CollectiveCommType::AllGather => "all_gather",
            CollectiveCommType::Gather => "gather",
            CollectiveCommType::Scatter => "scatter",
            CollectiveCommType::Broadcast => "broadcast",
            CollectiveCommType::AllToAll => "all_to_all",
            CollectiveCommType::ReduceScatter => "reduce_scatter",
            CollectiveCommType::ReduceScatterBlock => "reduce_scatter_block",
            CollectiveCommType::Barrier => "barrier",
        }
    }
}
