//! The typed decoder against a plain scan: for every field id, the last
//! occurrence and the repeated occurrences it reports are the ones a linear
//! walk of the fields before the first error finds.

use protozero::{Decoder, TypedDecoder};

/// The `typed_decoder` target.
pub fn typed_decoder(data: &[u8]) {
    let typed = TypedDecoder::<'_, 16>::new(data);
    let fields: Vec<_> = Decoder::new(data).map_while(Result::ok).collect();
    for id in 1..40u32 {
        let expected: Vec<_> = fields.iter().filter(|f| f.id == id).collect();
        assert_eq!(
            typed.get(id).map(|f| f.value),
            expected.last().map(|f| f.value)
        );
        let repeated: Vec<_> = typed.repeated(id).map(|f| f.value).collect();
        let wanted: Vec<_> = expected.iter().map(|f| f.value).collect();
        assert_eq!(repeated, wanted);
    }
}
