;; XXH32 for two seeds in one pass, the WebAssembly twin of xxhash32.ts (docs/SPEC.md, "Hashing").
;; Compiled by scripts/build-wasm.mjs into xxhash32-wasm-bytes.ts; core/test/xxhash32-wasm.test.ts
;; compiles it again and fails if the committed bytes differ.
;;
;; Memory: bytes 0-7 receive the two hashes (XXH32 with seedA, then seedB, little-endian);
;; the input starts at byte 16 (a batch's lengths and hashes follow it, where JS puts them).
;; JS grows the memory for long inputs.
(module
  (memory (export "memory") 1)
  ;; One key: the input at byte 16, its two hashes to bytes 0-7.
  (func (export "pair") (param $len i32) (param $sa i32) (param $sb i32)
    (call $hash (i32.const 16) (local.get $len) (local.get $sa) (local.get $sb) (i32.const 0)))
  ;; A batch (issue 36): $count keys' bytes back to back from byte 16, key i's length the i32 at
  ;; $lengths + 4i; key i's two hashes to $out + 8i and $out + 8i + 4. One call per batch.
  (func (export "many") (param $count i32) (param $sa i32) (param $sb i32) (param $lengths i32) (param $out i32)
    (local $p i32) (local $len i32) (local $end i32)
    (local.set $p (i32.const 16))
    (local.set $end (i32.add (local.get $lengths) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $keys
        (br_if $done (i32.ge_u (local.get $lengths) (local.get $end)))
        (local.set $len (i32.load (local.get $lengths)))
        (call $hash (local.get $p) (local.get $len) (local.get $sa) (local.get $sb) (local.get $out))
        (local.set $p (i32.add (local.get $p) (local.get $len)))
        (local.set $lengths (i32.add (local.get $lengths) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (br $keys))))
  ;; XXH32 of [$p, $p + $len) with both seeds, stored at $o and $o + 4.
  (func $hash (param $p i32) (param $len i32) (param $sa i32) (param $sb i32) (param $o i32)
    (local $end i32) (local $w i32)
    (local $a1 i32) (local $a2 i32) (local $a3 i32) (local $a4 i32)
    (local $b1 i32) (local $b2 i32) (local $b3 i32) (local $b4 i32)
    (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (if (i32.ge_u (local.get $len) (i32.const 16))
      (then
        ;; seed + PRIME1 + PRIME2, seed + PRIME2, seed, seed - PRIME1
        (local.set $a1 (i32.add (local.get $sa) (i32.const 0x24234428)))
        (local.set $a2 (i32.add (local.get $sa) (i32.const 0x85ebca77)))
        (local.set $a3 (local.get $sa))
        (local.set $a4 (i32.sub (local.get $sa) (i32.const 0x9e3779b1)))
        (local.set $b1 (i32.add (local.get $sb) (i32.const 0x24234428)))
        (local.set $b2 (i32.add (local.get $sb) (i32.const 0x85ebca77)))
        (local.set $b3 (local.get $sb))
        (local.set $b4 (i32.sub (local.get $sb) (i32.const 0x9e3779b1)))
        (loop $stripe
          (local.set $w (i32.mul (i32.load (local.get $p)) (i32.const 0x85ebca77)))
          (local.set $a1 (i32.mul (i32.rotl (i32.add (local.get $a1) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $b1 (i32.mul (i32.rotl (i32.add (local.get $b1) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $w (i32.mul (i32.load offset=4 (local.get $p)) (i32.const 0x85ebca77)))
          (local.set $a2 (i32.mul (i32.rotl (i32.add (local.get $a2) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $b2 (i32.mul (i32.rotl (i32.add (local.get $b2) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $w (i32.mul (i32.load offset=8 (local.get $p)) (i32.const 0x85ebca77)))
          (local.set $a3 (i32.mul (i32.rotl (i32.add (local.get $a3) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $b3 (i32.mul (i32.rotl (i32.add (local.get $b3) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $w (i32.mul (i32.load offset=12 (local.get $p)) (i32.const 0x85ebca77)))
          (local.set $a4 (i32.mul (i32.rotl (i32.add (local.get $a4) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $b4 (i32.mul (i32.rotl (i32.add (local.get $b4) (local.get $w)) (i32.const 13)) (i32.const 0x9e3779b1)))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (br_if $stripe (i32.le_u (i32.add (local.get $p) (i32.const 16)) (local.get $end))))
        (local.set $a (i32.add
          (i32.add (i32.rotl (local.get $a1) (i32.const 1)) (i32.rotl (local.get $a2) (i32.const 7)))
          (i32.add (i32.rotl (local.get $a3) (i32.const 12)) (i32.rotl (local.get $a4) (i32.const 18)))))
        (local.set $b (i32.add
          (i32.add (i32.rotl (local.get $b1) (i32.const 1)) (i32.rotl (local.get $b2) (i32.const 7)))
          (i32.add (i32.rotl (local.get $b3) (i32.const 12)) (i32.rotl (local.get $b4) (i32.const 18))))))
      (else
        ;; seed + PRIME5
        (local.set $a (i32.add (local.get $sa) (i32.const 0x165667b1)))
        (local.set $b (i32.add (local.get $sb) (i32.const 0x165667b1)))))
    (local.set $a (i32.add (local.get $a) (local.get $len)))
    (local.set $b (i32.add (local.get $b) (local.get $len)))
    (block $words_done
      (loop $words
        (br_if $words_done (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)))
        (local.set $w (i32.mul (i32.load (local.get $p)) (i32.const 0xc2b2ae3d)))
        (local.set $a (i32.mul (i32.rotl (i32.add (local.get $a) (local.get $w)) (i32.const 17)) (i32.const 0x27d4eb2f)))
        (local.set $b (i32.mul (i32.rotl (i32.add (local.get $b) (local.get $w)) (i32.const 17)) (i32.const 0x27d4eb2f)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $words)))
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $w (i32.mul (i32.load8_u (local.get $p)) (i32.const 0x165667b1)))
        (local.set $a (i32.mul (i32.rotl (i32.add (local.get $a) (local.get $w)) (i32.const 11)) (i32.const 0x9e3779b1)))
        (local.set $b (i32.mul (i32.rotl (i32.add (local.get $b) (local.get $w)) (i32.const 11)) (i32.const 0x9e3779b1)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    ;; avalanche
    (local.set $a (i32.mul (i32.xor (local.get $a) (i32.shr_u (local.get $a) (i32.const 15))) (i32.const 0x85ebca77)))
    (local.set $a (i32.mul (i32.xor (local.get $a) (i32.shr_u (local.get $a) (i32.const 13))) (i32.const 0xc2b2ae3d)))
    (local.set $b (i32.mul (i32.xor (local.get $b) (i32.shr_u (local.get $b) (i32.const 15))) (i32.const 0x85ebca77)))
    (local.set $b (i32.mul (i32.xor (local.get $b) (i32.shr_u (local.get $b) (i32.const 13))) (i32.const 0xc2b2ae3d)))
    (i32.store (local.get $o) (i32.xor (local.get $a) (i32.shr_u (local.get $a) (i32.const 16))))
    (i32.store offset=4 (local.get $o) (i32.xor (local.get $b) (i32.shr_u (local.get $b) (i32.const 16))))))
