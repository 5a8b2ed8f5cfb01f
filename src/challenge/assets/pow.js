// Floodgate's proof of work. It finds the smallest decimal `solution` (0, 1, 2, ...) for
// which SHA-256 over the UTF-8 bytes of `nonce + ":" + solution` starts with `difficulty`
// zero bits, then goes to `action?nonce=...&solution=...&to=...`. The server checks the same
// hash (src/challenge/pow.rs). Every per-request value is read from the data- attributes of
// #challenge, so this text stays the same for every page and the Content-Security-Policy
// allows it by its hash. Plain SHA-256 on 32-bit ints: crypto.subtle is missing on plain-HTTP
// origins (and too slow per call).
(function () {
  "use strict";

  // SHA-256's constants (FIPS 180-4 §4.2.2, §5.3.3): the first 32 bits of the fractional
  // parts of the cube roots of the first 64 primes (K) and of the square roots of the first 8
  // (IV). Computed here rather than listed: a third of the script's bytes, sent with every
  // page. A double holds 50 bits of each fraction, 18 more than needed; a wrong constant
  // would fail the known hash the script checks before it searches.
  var K = new Int32Array(64), IV = new Int32Array(8);
  for (var p = 2, n = 0; n < 64; p++) {
    for (var d = 2; d * d <= p && p % d; d++);
    if (d * d > p) {
      if (n < 8) IV[n] = fraction(Math.sqrt(p));
      K[n++] = fraction(Math.cbrt(p));
    }
  }
  var W = new Int32Array(64);

  // The first 32 bits of the fractional part of `x`, as a 32-bit int.
  function fraction(x) {
    return (x - Math.floor(x)) * 4294967296;
  }

  // Folds the 64-byte block at `at` of `bytes` into the state `H` (eight 32-bit words).
  function compress(H, bytes, at) {
    var i, x, y;
    for (i = 0; i < 16; i++, at += 4) {
      W[i] = (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
    }
    for (i = 16; i < 64; i++) {
      x = W[i - 15];
      y = W[i - 2];
      W[i] = (W[i - 16] + W[i - 7] +
        (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
        (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10))) | 0;
    }
    var a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7], t1, t2;
    for (i = 0; i < 64; i++) {
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
      t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0;
      d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
    H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
  }

  // The UTF-8 bytes of `text`.
  function utf8(text) {
    return new TextEncoder().encode(text);
  }

  // Whether the state `H` starts with `bits` zero bits.
  function enough(H, bits) {
    var i = 0;
    for (; bits >= 32; bits -= 32, i++) {
      if (H[i] !== 0) return false;
    }
    return bits === 0 || (H[i] >>> (32 - bits)) === 0;
  }

  // The search for a solution to `nonce` at `difficulty` bits. The nonce's whole 64-byte
  // blocks are hashed once (the midstate); each try hashes only the last one or two blocks,
  // in a buffer rewritten in place: no allocation per hash.
  function Search(nonce, difficulty) {
    var prefix = utf8(nonce + ":");
    var whole = prefix.length - (prefix.length % 64);
    this.mid = new Int32Array(IV);
    for (var at = 0; at < whole; at += 64) compress(this.mid, prefix, at);
    this.prefixBits = prefix.length * 8;
    this.tail = prefix.subarray(whole);
    this.difficulty = difficulty;
    this.H = new Int32Array(8);
    this.block = new Uint8Array(192);
    this.n = 0;
    this.digits = 1;
    this.layout();
  }

  // Lays out the last blocks for a counter of `this.digits` digits: the tail of the prefix,
  // the counter, the 0x80 byte, zeros and the message length in bits.
  Search.prototype.layout = function () {
    var block = this.block, tail = this.tail.length, end = tail + this.digits;
    block.fill(0);
    block.set(this.tail, 0);
    var text = String(this.n);
    for (var i = 0; i < this.digits; i++) block[tail + i] = text.charCodeAt(i);
    block[end] = 0x80;
    this.blocks = end + 9 <= 64 ? 1 : 2;
    var bits = this.prefixBits + this.digits * 8, last = this.blocks * 64;
    block[last - 1] = bits & 0xff;
    block[last - 2] = (bits >>> 8) & 0xff;
    block[last - 3] = (bits >>> 16) & 0xff;
    block[last - 4] = (bits >>> 24) & 0xff;
    this.end = end;
  };

  // Moves the counter one up, in place; a new digit lays the blocks out again.
  Search.prototype.next = function () {
    this.n++;
    var block = this.block, i = this.end - 1, first = this.tail.length;
    while (i >= first && block[i] === 57) block[i--] = 48;
    if (i >= first) {
      block[i]++;
    } else {
      this.digits++;
      this.layout();
    }
  };

  // Tries up to `count` solutions; the solution found, or -1.
  Search.prototype.run = function (count) {
    var H = this.H, mid = this.mid, block = this.block, bits = this.difficulty;
    for (var k = 0; k < count; k++) {
      H.set(mid);
      compress(H, block, 0);
      if (this.blocks === 2) compress(H, block, 64);
      if (enough(H, bits)) return this.n;
      this.next();
    }
    return -1;
  };

  // The hex SHA-256 of `text`'s UTF-8 bytes (the self-check, and tests).
  function sha256hex(text) {
    var bytes = utf8(text), length = bytes.length, padded = (length + 9 + 63) & ~63;
    var message = new Uint8Array(padded), H = new Int32Array(IV), bits = length * 8, out = "";
    message.set(bytes);
    message[length] = 0x80;
    for (var i = 0; i < 4; i++) message[padded - 1 - i] = (bits / Math.pow(2, 8 * i)) & 0xff;
    for (var at = 0; at < padded; at += 64) compress(H, message, at);
    for (i = 0; i < 8; i++) out += ("0000000" + (H[i] >>> 0).toString(16)).slice(-8);
    return out;
  }

  // SHA-256 of `abc:0`: a browser whose script engine gets it wrong says so instead of
  // searching forever (the server's tests pin the same vector).
  var KNOWN = "5f36efce86f68877cee18fda5637abb2a1bb409f4326cc741fdf13200aa26980";
  var CHUNK = 32768;

  // Solves the challenge the page names, a chunk at a time so the page stays responsive.
  function start(page) {
    var progress = document.getElementById("progress");
    progress.hidden = false;
    if (sha256hex("abc:0") !== KNOWN) {
      progress.textContent = "This browser computes SHA-256 wrongly, so the check cannot finish.";
      return;
    }
    var data = page.dataset;
    var search = new Search(data.nonce, Number(data.difficulty));
    var started = Date.now();
    function chunk() {
      var solution = search.run(CHUNK);
      if (solution < 0) {
        progress.textContent = "Checking... " + search.n.toLocaleString() + " tries so far.";
        setTimeout(chunk, 0);
        return;
      }
      progress.textContent = "Done in " + (Date.now() - started) + " ms, continuing...";
      location.replace(data.action + "?nonce=" + encodeURIComponent(data.nonce) +
        "&solution=" + solution + "&to=" + data.to);
    }
    setTimeout(chunk, 0);
  }

  if (typeof document !== "undefined") {
    start(document.getElementById("challenge"));
  } else if (typeof module !== "undefined") {
    module.exports = { Search: Search, sha256hex: sha256hex };
  }
})();
