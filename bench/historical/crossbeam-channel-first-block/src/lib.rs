//! Nothing: the test is in tests/.
