;; kith distance kernels, WebAssembly SIMD128. Compiled to distance.wasm by scripts/build.mjs;
;; the TypeScript side is wasm-module.ts (loading), wasm-kernel.ts (f32), sq8-wasm-kernel.ts.
;;
;; Every export scores a whole candidate list per call: crossing from JS into wasm costs about as
;; much as a d=128 distance, so it is paid per list, never per distance. Pointers are byte
;; offsets into the imported memory, laid out by the arenas (slot-arena.ts):
;;   query   f32[dim]       the query vector
;;   ids     u32[count]     candidate slots, repeats allowed (score_ids_*)
;;   scores  f32[count]     output: similarity, higher is better (core/distance.ts)
;;   base    slot s at base + s * stride
;; Similarity is the dot product for Dot and Cosine (Cosine vectors are stored unit length) and
;; the NEGATIVE squared L2 distance for Euclid, so one "higher is better" top-k serves all three.
;;
;; Shape of the code, each choice measured against variants of this file (Node 20, AMD EPYC):
;; - One function per kind of list walk ($dot_f32_list, $l2_f32_list, $sq8_list) with the
;;   per-vector loop written inside it. Node 20 does not inline wasm calls, and a call per
;;   distance cost a third of the throughput at d=128 (56 against 86 M/s) and more at d=25.
;; - Four independent f32x4 accumulators over 16 components per iteration: an f32 add has a
;;   latency of several cycles, and one accumulator would serialise the loop on it. Two
;;   accumulators (8 wide) measured ~10% slower at d=128, eight (32 wide) ~30% slower.
;; - mul + add, never FMA: Node 20 has SIMD128 but not relaxed SIMD.
;; - Any dim: after the 16-wide loop, 4-wide steps, then at most three scalar components.
;; - A list is walked either by ids (slot = ids[i]) or as a range (slot = start + i); $by_ids
;;   picks, once per slot, a branch that always goes the same way.
;; - In memories of 16 MiB and more, lists by ids first touch their slots' cache lines, 64 slots
;;   at a time ($touch_slots).
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; --------------------------------------------------------------------------------------------
  ;; f32: scores[i] = dot(query, slot)

  (func $dot_f32_list
    (param $by_ids i32) (param $query i32) (param $ids i32) (param $start i32) (param $count i32)
    (param $scores i32) (param $base i32) (param $stride i32) (param $dim i32)
    (local $i i32) (local $q i32) (local $v i32) (local $end i32) (local $sum f32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $v (i32.add (local.get $base) (i32.mul (local.get $stride)
          (if (result i32) (local.get $by_ids)
            (then (i32.load (i32.add (local.get $ids) (i32.shl (local.get $i) (i32.const 2)))))
            (else (i32.add (local.get $start) (local.get $i)))))))
        (local.set $q (local.get $query))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $end (i32.add (local.get $q) (i32.shl (i32.and (local.get $dim) (i32.const -16)) (i32.const 2))))
        (block $wide_done
          (loop $wide
            (br_if $wide_done (i32.ge_u (local.get $q) (local.get $end)))
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul (v128.load (local.get $q)) (v128.load (local.get $v)))))
            (local.set $a1 (f32x4.add (local.get $a1)
              (f32x4.mul (v128.load offset=16 (local.get $q)) (v128.load offset=16 (local.get $v)))))
            (local.set $a2 (f32x4.add (local.get $a2)
              (f32x4.mul (v128.load offset=32 (local.get $q)) (v128.load offset=32 (local.get $v)))))
            (local.set $a3 (f32x4.add (local.get $a3)
              (f32x4.mul (v128.load offset=48 (local.get $q)) (v128.load offset=48 (local.get $v)))))
            (local.set $q (i32.add (local.get $q) (i32.const 64)))
            (local.set $v (i32.add (local.get $v) (i32.const 64)))
            (br $wide)))
        ;; dim mod 16 in 4..15: one to three groups of four.
        (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $dim) (i32.const 12)) (i32.const 2))))
        (block $quad_done
          (loop $quad
            (br_if $quad_done (i32.ge_u (local.get $q) (local.get $end)))
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul (v128.load (local.get $q)) (v128.load (local.get $v)))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $v (i32.add (local.get $v) (i32.const 16)))
            (br $quad)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (local.set $sum (f32.add
          (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
          (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        ;; dim mod 4: at most three scalar components.
        (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $dim) (i32.const 3)) (i32.const 2))))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $q) (local.get $end)))
            (local.set $sum (f32.add (local.get $sum) (f32.mul (f32.load (local.get $q)) (f32.load (local.get $v)))))
            (local.set $q (i32.add (local.get $q) (i32.const 4)))
            (local.set $v (i32.add (local.get $v) (i32.const 4)))
            (br $tail)))
        (f32.store (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2))) (local.get $sum))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; --------------------------------------------------------------------------------------------
  ;; f32: scores[i] = -|query - slot|², the same walk as $dot_f32_list.

  (func $l2_f32_list
    (param $by_ids i32) (param $query i32) (param $ids i32) (param $start i32) (param $count i32)
    (param $scores i32) (param $base i32) (param $stride i32) (param $dim i32)
    (local $i i32) (local $q i32) (local $v i32) (local $end i32) (local $sum f32) (local $s f32) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $v (i32.add (local.get $base) (i32.mul (local.get $stride)
          (if (result i32) (local.get $by_ids)
            (then (i32.load (i32.add (local.get $ids) (i32.shl (local.get $i) (i32.const 2)))))
            (else (i32.add (local.get $start) (local.get $i)))))))
        (local.set $q (local.get $query))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $end (i32.add (local.get $q) (i32.shl (i32.and (local.get $dim) (i32.const -16)) (i32.const 2))))
        (block $wide_done
          (loop $wide
            (br_if $wide_done (i32.ge_u (local.get $q) (local.get $end)))
            (local.set $d (f32x4.sub (v128.load (local.get $q)) (v128.load (local.get $v))))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (local.get $d) (local.get $d))))
            (local.set $d (f32x4.sub (v128.load offset=16 (local.get $q)) (v128.load offset=16 (local.get $v))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (local.get $d) (local.get $d))))
            (local.set $d (f32x4.sub (v128.load offset=32 (local.get $q)) (v128.load offset=32 (local.get $v))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $d) (local.get $d))))
            (local.set $d (f32x4.sub (v128.load offset=48 (local.get $q)) (v128.load offset=48 (local.get $v))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (local.get $d) (local.get $d))))
            (local.set $q (i32.add (local.get $q) (i32.const 64)))
            (local.set $v (i32.add (local.get $v) (i32.const 64)))
            (br $wide)))
        (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $dim) (i32.const 12)) (i32.const 2))))
        (block $quad_done
          (loop $quad
            (br_if $quad_done (i32.ge_u (local.get $q) (local.get $end)))
            (local.set $d (f32x4.sub (v128.load (local.get $q)) (v128.load (local.get $v))))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (local.get $d) (local.get $d))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $v (i32.add (local.get $v) (i32.const 16)))
            (br $quad)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (local.set $sum (f32.add
          (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
          (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $dim) (i32.const 3)) (i32.const 2))))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $q) (local.get $end)))
            (local.set $s (f32.sub (f32.load (local.get $q)) (f32.load (local.get $v))))
            (local.set $sum (f32.add (local.get $sum) (f32.mul (local.get $s) (local.get $s))))
            (local.set $q (i32.add (local.get $q) (i32.const 4)))
            (local.set $v (i32.add (local.get $v) (i32.const 4)))
            (br $tail)))
        (f32.store (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2))) (f32.neg (local.get $sum)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; --------------------------------------------------------------------------------------------
  ;; sq8: one u8 code per component; the dequantized vector is v'[i] = min + step * code[i].
  ;; Nothing is dequantized here:
  ;;   dot(q, v')    = min * sum(q) + step * dot(q, code)
  ;;   |q - v'|^2    = |q|^2 + |v'|^2 - 2 dot(q, v')
  ;;   cosine(q, v') = dot(q, v') * (1 / |v'|)        (q is unit; v' is close to, not exactly, unit)
  ;; sum(q) and |q|^2 come once per call; each slot has a 16-byte record [min, step, |v'|^2, 1/|v'|]
  ;; (f32) at params + slot * 16, written by sq8-arena.ts. $metric: 0 Dot, 1 Cosine, 2 Euclid.
  ;;
  ;; Codes widen u8 -> u16 -> u32 -> f32 with the extend instructions. convert_i32x4_s rather than
  ;; _u: the lanes are below 256, so both give the same floats, but x86 has one instruction for the
  ;; signed form and V8 lowers the unsigned one to several (measured: half the throughput at
  ;; d=128). i8x16.swizzle straight to u32 lanes measured slower than the extends.

  (func $sq8_list
    (param $metric i32) (param $by_ids i32) (param $query i32) (param $ids i32) (param $start i32)
    (param $count i32) (param $scores i32) (param $codes i32) (param $stride i32) (param $params i32)
    (param $dim i32) (param $qsum f32) (param $qnorm2 f32)
    (local $i i32) (local $slot i32) (local $q i32) (local $c i32) (local $p i32) (local $end i32)
    (local $sum f32) (local $dot f32) (local $b v128) (local $h v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $slot
          (if (result i32) (local.get $by_ids)
            (then (i32.load (i32.add (local.get $ids) (i32.shl (local.get $i) (i32.const 2)))))
            (else (i32.add (local.get $start) (local.get $i)))))
        (local.set $c (i32.add (local.get $codes) (i32.mul (local.get $slot) (local.get $stride))))
        (local.set $q (local.get $query))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $end (i32.add (local.get $c) (i32.and (local.get $dim) (i32.const -16))))
        (block $wide_done
          (loop $wide
            (br_if $wide_done (i32.ge_u (local.get $c) (local.get $end)))
            (local.set $b (v128.load (local.get $c)))
            (local.set $h (i16x8.extend_low_i8x16_u (local.get $b)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $h))))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $h))))))
            (local.set $h (i16x8.extend_high_i8x16_u (local.get $b)))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load offset=32 (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $h))))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load offset=48 (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $h))))))
            (local.set $q (i32.add (local.get $q) (i32.const 64)))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (br $wide)))
        ;; dim mod 16 >= 8: eight codes through a zero-extended 64-bit load.
        (if (i32.and (local.get $dim) (i32.const 8))
          (then
            (local.set $h (i16x8.extend_low_i8x16_u (v128.load64_zero (local.get $c))))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $h))))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $h))))))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (local.set $c (i32.add (local.get $c) (i32.const 8)))))
        ;; then four through a 32-bit load.
        (if (i32.and (local.get $dim) (i32.const 4))
          (then
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load (local.get $q))
              (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u
                (i16x8.extend_low_i8x16_u (v128.load32_zero (local.get $c))))))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (local.set $sum (f32.add
          (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
          (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $end (i32.add (local.get $c) (i32.and (local.get $dim) (i32.const 3))))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $c) (local.get $end)))
            (local.set $sum (f32.add (local.get $sum)
              (f32.mul (f32.load (local.get $q)) (f32.convert_i32_u (i32.load8_u (local.get $c))))))
            (local.set $q (i32.add (local.get $q) (i32.const 4)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $tail)))
        ;; From dot(q, code) to the similarity, with the slot's record.
        (local.set $p (i32.add (local.get $params) (i32.shl (local.get $slot) (i32.const 4))))
        (local.set $dot (f32.add
          (f32.mul (f32.load (local.get $p)) (local.get $qsum))
          (f32.mul (f32.load offset=4 (local.get $p)) (local.get $sum))))
        (f32.store (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2)))
          (if (result f32) (i32.eqz (local.get $metric))
            (then (local.get $dot))
            (else (if (result f32) (i32.eq (local.get $metric) (i32.const 1))
              (then (f32.mul (local.get $dot) (f32.load offset=12 (local.get $p))))
              ;; The expansion cancels when q is near v': never let rounding make it negative.
              (else (f32.neg (f32.max (f32.const 0)
                (f32.sub
                  (f32.add (local.get $qnorm2) (f32.load offset=8 (local.get $p)))
                  (f32.add (local.get $dot) (local.get $dot))))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; --------------------------------------------------------------------------------------------
  ;; Candidate lists from a graph are random slots; once the arena outgrows the cache, scoring
  ;; them one after another waits on one vector's memory at a time. This first pass loads one
  ;; byte of every cache line of every listed slot, all independent loads, so the CPU overlaps
  ;; their misses; the scoring pass then finds the lines arriving or in cache. Measured with
  ;; lists of 32 random slots on 64 MiB of vectors: 1.3x the throughput at d=25, 2.4x at
  ;; d=128, 1.4x at d=784. On data that fits in cache it only costs (10% at d=128, 25% at
  ;; d=784), and it starts to pay between 1 and 16 MiB depending on d: the callers below use it
  ;; only when the memory is at least 256 pages (16 MiB; this machine's L3 is 32 MiB).
  ;; The loaded values are dropped: the compiler keeps the loads because a wasm load may trap.
  (func $touch_slots (param $ids i32) (param $count i32) (param $base i32) (param $stride i32) (param $bytes i32)
    (local $end i32) (local $v i32) (local $last i32)
    (local.set $end (i32.add (local.get $ids) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $ids) (local.get $end)))
        (local.set $v (i32.add (local.get $base) (i32.mul (i32.load (local.get $ids)) (local.get $stride))))
        (local.set $last (i32.add (local.get $v) (i32.sub (local.get $bytes) (i32.const 1))))
        (block $lines_done
          (loop $line
            (br_if $lines_done (i32.gt_u (local.get $v) (local.get $last)))
            (drop (i32.load8_u (local.get $v)))
            (local.set $v (i32.add (local.get $v) (i32.const 64)))
            (br $line)))
        ;; A slot not aligned to a line ends in one the 64-byte steps may have skipped.
        (drop (i32.load8_u (local.get $last)))
        (local.set $ids (i32.add (local.get $ids) (i32.const 4)))
        (br $next))))

  ;; --------------------------------------------------------------------------------------------
  ;; Exports. f32: (query, ids | start, count, scores, vectors base, stride in bytes, dim).

  ;; Lists by ids go through the touch pass in chunks of 64 slots, small enough that a chunk's
  ;; lines are still in L1/L2 when it is scored (64 slots of d=784 are 200 KiB). Touching a
  ;; whole 4096-slot list first made a filtered Flat scan at d=784 a third slower.
  (func $f32_ids_in_chunks
    (param $l2 i32) (param $query i32) (param $ids i32) (param $count i32) (param $scores i32)
    (param $base i32) (param $stride i32) (param $dim i32)
    (local $n i32) (local $touch i32)
    (local.set $touch (i32.ge_u (memory.size) (i32.const 256)))
    (block $done
      (loop $chunk
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $n (select (i32.const 64) (local.get $count) (i32.gt_u (local.get $count) (i32.const 64))))
        (if (local.get $touch)
          (then (call $touch_slots (local.get $ids) (local.get $n) (local.get $base) (local.get $stride)
            (i32.shl (local.get $dim) (i32.const 2)))))
        (if (local.get $l2)
          (then (call $l2_f32_list (i32.const 1) (local.get $query) (local.get $ids) (i32.const 0) (local.get $n)
            (local.get $scores) (local.get $base) (local.get $stride) (local.get $dim)))
          (else (call $dot_f32_list (i32.const 1) (local.get $query) (local.get $ids) (i32.const 0) (local.get $n)
            (local.get $scores) (local.get $base) (local.get $stride) (local.get $dim))))
        (local.set $ids (i32.add (local.get $ids) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $scores (i32.add (local.get $scores) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $count (i32.sub (local.get $count) (local.get $n)))
        (br $chunk))))

  (func (export "score_ids_dot")
    (param $query i32) (param $ids i32) (param $count i32) (param $scores i32)
    (param $base i32) (param $stride i32) (param $dim i32)
    (call $f32_ids_in_chunks (i32.const 0) (local.get $query) (local.get $ids) (local.get $count)
      (local.get $scores) (local.get $base) (local.get $stride) (local.get $dim)))

  (func (export "score_range_dot")
    (param $query i32) (param $start i32) (param $count i32) (param $scores i32)
    (param $base i32) (param $stride i32) (param $dim i32)
    (call $dot_f32_list (i32.const 0) (local.get $query) (i32.const 0) (local.get $start) (local.get $count)
      (local.get $scores) (local.get $base) (local.get $stride) (local.get $dim)))

  (func (export "score_ids_l2")
    (param $query i32) (param $ids i32) (param $count i32) (param $scores i32)
    (param $base i32) (param $stride i32) (param $dim i32)
    (call $f32_ids_in_chunks (i32.const 1) (local.get $query) (local.get $ids) (local.get $count)
      (local.get $scores) (local.get $base) (local.get $stride) (local.get $dim)))

  (func (export "score_range_l2")
    (param $query i32) (param $start i32) (param $count i32) (param $scores i32)
    (param $base i32) (param $stride i32) (param $dim i32)
    (call $l2_f32_list (i32.const 0) (local.get $query) (i32.const 0) (local.get $start) (local.get $count)
      (local.get $scores) (local.get $base) (local.get $stride) (local.get $dim)))

  ;; sq8: (metric, query, ids | start, count, scores, codes base, code stride in bytes,
  ;; params base, dim, sum(q), |q|^2).

  (func (export "score_ids_sq8")
    (param $metric i32) (param $query i32) (param $ids i32) (param $count i32) (param $scores i32)
    (param $codes i32) (param $stride i32) (param $params i32) (param $dim i32)
    (param $qsum f32) (param $qnorm2 f32)
    (local $n i32) (local $touch i32)
    (local.set $touch (i32.ge_u (memory.size) (i32.const 256)))
    (block $done
      (loop $chunk
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $n (select (i32.const 64) (local.get $count) (i32.gt_u (local.get $count) (i32.const 64))))
        (if (local.get $touch)
          (then
            (call $touch_slots (local.get $ids) (local.get $n) (local.get $codes) (local.get $stride) (local.get $dim))
            (call $touch_slots (local.get $ids) (local.get $n) (local.get $params) (i32.const 16) (i32.const 16))))
        (call $sq8_list (local.get $metric) (i32.const 1) (local.get $query) (local.get $ids) (i32.const 0)
          (local.get $n) (local.get $scores) (local.get $codes) (local.get $stride) (local.get $params)
          (local.get $dim) (local.get $qsum) (local.get $qnorm2))
        (local.set $ids (i32.add (local.get $ids) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $scores (i32.add (local.get $scores) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $count (i32.sub (local.get $count) (local.get $n)))
        (br $chunk))))

  (func (export "score_range_sq8")
    (param $metric i32) (param $query i32) (param $start i32) (param $count i32) (param $scores i32)
    (param $codes i32) (param $stride i32) (param $params i32) (param $dim i32)
    (param $qsum f32) (param $qnorm2 f32)
    (call $sq8_list (local.get $metric) (i32.const 0) (local.get $query) (i32.const 0) (local.get $start)
      (local.get $count) (local.get $scores) (local.get $codes) (local.get $stride) (local.get $params)
      (local.get $dim) (local.get $qsum) (local.get $qnorm2)))
)
