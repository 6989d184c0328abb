// @webdpl/algorithms: every algorithm takes an execution policy first and returns a Promise.
// Families: transform-reduce, map, scan-scatter, sort (see README); engines are exported for the bench.

export { adjacentDifference, minus } from './adjacent-difference/index';
export { allOf, anyOf, noneOf } from './any-of/index';
export type { SearchResult } from './binary-search/index';
export { binarySearch, lowerBound, upperBound } from './binary-search/index';
export type { PredicateArg } from './compaction/index';
export { copyIf, partition, removeIf, stablePartition, unique } from './compaction/index';
export { copy } from './copy/index';
export { count, countIf } from './count/index';
export type { MergeSortOptions, MergeSortResult } from './engines/merge-sort/index';
export { mergeSortDevice } from './engines/merge-sort/index';
export type { RadixKeyType, RadixSortOptions, RadixSortResult } from './engines/radix-sort/index';
export { radixSortDevice } from './engines/radix-sort/index';
export { fill } from './fill/index';
export { findIf } from './find-if/index';
export { forEach } from './for-each/index';
export { gather, gatherIf, scatter, scatterIf } from './gather/index';
export { innerProduct } from './inner-product/index';
export { iota } from './iota/index';
export { isSorted, isSortedUntil } from './is-sorted/index';
export type { ElementAt, MinMax } from './min-element/index';
export { maxElement, minElement, minmaxElement } from './min-element/index';
export type { OperatorArg } from './reduce/index';
export { reduce } from './reduce/index';
export type { ScanOperatorArg, TransformArg } from './scans/index';
export { exclusiveScan, inclusiveScan, transformExclusiveScan, transformInclusiveScan } from './scans/index';
export type { BuiltinComparator, ComparatorArg } from './sort/index';
export { greater, less, sort } from './sort/index';
export { sortByKey } from './sort-by-key/index';
export { stableSort } from './stable-sort/index';
export { transform } from './transform/index';
export type { FunctionArg } from './transform-reduce/index';
export { transformReduce } from './transform-reduce/index';
