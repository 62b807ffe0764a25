//! Which pages of a mapping hold their own memory (were written, or at
//! least faulted in): the pages a memory reset has to look at.
//!
//! Linux's `PAGEMAP_SCAN` ioctl (6.7 and later) reports them as ranges,
//! in memory or swapped out, and skips the zero page; on older kernels
//! `mincore` answers page by page (for the pages in memory: the host must
//! not swap the guest's memory out).

use std::fs::File;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

/// `struct pm_scan_arg` of `linux/fs.h`.
#[repr(C)]
struct PmScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

/// `struct page_region` of `linux/fs.h`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PageRegion {
    start: u64,
    end: u64,
    categories: u64,
}

/// `_IOWR('f', 16, struct pm_scan_arg)`.
const PAGEMAP_SCAN: u64 = (3 << 30) | ((size_of::<PmScanArg>() as u64) << 16) | (0x66 << 8) | 16;
const PAGE_IS_PRESENT: u64 = 1 << 3;
const PAGE_IS_SWAPPED: u64 = 1 << 4;
const PAGE_IS_PFNZERO: u64 = 1 << 5;

/// `/proc/self/pagemap`, when the kernel answers `PAGEMAP_SCAN` on it.
fn pagemap() -> Option<&'static File> {
    static PAGEMAP: OnceLock<Option<File>> = OnceLock::new();
    PAGEMAP
        .get_or_init(|| {
            let file = File::open("/proc/self/pagemap").ok()?;
            // Probe with the page holding this function's code.
            let page = page_size();
            let probe = (pagemap as *const () as usize) & !(page - 1);
            scan(&file, probe, page, &mut Vec::new()).ok()?;
            Some(file)
        })
        .as_ref()
}

/// Appends to `out` the byte ranges (relative to `base`) of the pages in
/// `[base, base + len)` that have memory of their own.
///
/// # Safety
///
/// `base..base + len` must be mapped and `base` page-aligned.
pub(crate) unsafe fn resident(
    base: *const u8,
    len: usize,
    out: &mut Vec<Range<usize>>,
) -> std::io::Result<()> {
    out.clear();
    if len == 0 {
        return Ok(());
    }
    if let Some(file) = pagemap() {
        return scan(file, base as usize, len, out);
    }
    mincore(base, len, out)
}

/// Scans with `PAGEMAP_SCAN` for present pages that are not the zero page.
fn scan(file: &File, base: usize, len: usize, out: &mut Vec<Range<usize>>) -> std::io::Result<()> {
    let mut regions = [PageRegion::default(); 32];
    let mut start = base as u64;
    let end = (base + len) as u64;
    loop {
        let mut arg = PmScanArg {
            size: size_of::<PmScanArg>() as u64,
            flags: 0,
            start,
            end,
            walk_end: 0,
            vec: regions.as_mut_ptr() as u64,
            vec_len: regions.len() as u64,
            max_pages: 0,
            // Not the zero page, and in memory or swapped out.
            category_inverted: PAGE_IS_PFNZERO,
            category_mask: PAGE_IS_PFNZERO,
            category_anyof_mask: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
            return_mask: 0,
        };
        // SAFETY: `arg` describes `regions`, which outlives the call; the
        // kernel only reads the scanned range's page tables.
        let found = unsafe { libc::ioctl(file.as_raw_fd(), PAGEMAP_SCAN as _, &mut arg) };
        if found < 0 {
            return Err(std::io::Error::last_os_error());
        }
        for region in &regions[..found as usize] {
            out.push((region.start as usize - base)..(region.end as usize - base));
        }
        if arg.walk_end >= end || found == 0 {
            return Ok(());
        }
        start = arg.walk_end;
    }
}

/// Asks `mincore` page by page.
fn mincore(base: *const u8, len: usize, out: &mut Vec<Range<usize>>) -> std::io::Result<()> {
    let page = page_size();
    let mut residency = vec![0u8; len.div_ceil(page)];
    // SAFETY: the caller promises the range is mapped; `residency` has a
    // byte per page.
    if unsafe { libc::mincore(base as *mut libc::c_void, len, residency.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    for (index, _) in residency.iter().enumerate().filter(|(_, r)| *r & 1 != 0) {
        let range = index * page..((index + 1) * page).min(len);
        match out.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
    Ok(())
}

/// The host's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        size if size > 0 => size as usize,
        _ => 4096,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A private anonymous mapping of `pages` pages, unmapped on drop.
    struct Mapping(*mut u8, usize);

    impl Mapping {
        fn new(pages: usize) -> Self {
            let len = pages * 4096;
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(ptr, libc::MAP_FAILED);
            Mapping(ptr as *mut u8, len)
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            unsafe { libc::munmap(self.0 as *mut libc::c_void, self.1) };
        }
    }

    #[test]
    fn written_pages_are_reported_and_untouched_ones_are_not() {
        let map = Mapping::new(64);
        unsafe {
            *map.0.add(3 * 4096 + 5) = 1;
            *map.0.add(4 * 4096) = 1;
            *map.0.add(40 * 4096 + 4095) = 1;
        }
        let mut ranges = Vec::new();
        unsafe { resident(map.0, map.1, &mut ranges) }.unwrap();
        assert_eq!(ranges, vec![3 * 4096..5 * 4096, 40 * 4096..41 * 4096]);
        let mut by_mincore = Vec::new();
        mincore(map.0, map.1, &mut by_mincore).unwrap();
        assert_eq!(by_mincore, ranges);
    }
}
