//! Keeps every buffer it allocates: without a limit it would take all the
//! memory it can get.
fn main() {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; 1 << 20];
        chunk[0] = kept.len() as u8;
        kept.push(chunk);
    }
}
