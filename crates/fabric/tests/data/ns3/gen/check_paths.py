#!/usr/bin/env python3
"""Per flow (sip, dip, sport): the (switch node, egress intf) sequence its data packets and its ACKs
were enqueued at, from ns-3's mix.tr (TraceFormat, 56-byte records after the SimSetting header).
Prints mismatches against a PATHS_FILE dump."""
import struct, sys, collections
def read(path):
    f = open(path, 'rb').read()
    n = struct.unpack_from('<I', f, 0)[0]
    off = 4 + 11 * n + 4
    data = collections.defaultdict(list); ack = collections.defaultdict(list)
    while off + 56 <= len(f):
        t, node, intf, qidx, qlen, sip, dip, size, l3, ev, ecn, nt = struct.unpack_from('<QHBBIIIHBBBB', f, off)
        if ev == 1 and nt == 1:  # Enqu at a switch
            if l3 == 0x11:
                sport, dport = struct.unpack_from('<HH', f, off + 32)
                k = ((sip >> 8) & 0xffff, (dip >> 8) & 0xffff, sport)
                if not data[k] or data[k][-1] != (node, intf):
                    if (node, intf) not in data[k]: data[k].append((node, intf))
            elif l3 in (0xFC, 0xFD):
                sport, dport = struct.unpack_from('<HH', f, off + 32)
                k = ((dip >> 8) & 0xffff, (sip >> 8) & 0xffff, dport)  # key by the data flow
                if (node, intf) not in ack[k]: ack[k].append((node, intf))
        off += 56
    return data, ack
if __name__ == '__main__':
    data, ack = read(sys.argv[1])
    bad = 0; bada = 0; n = 0
    for line in open(sys.argv[2]).read().split('\n')[1:]:
        if not line.strip(): continue
        p = line.split()
        src, dst, sport = int(p[0]), int(p[1]), int(p[2])
        bar = p.index('|')
        first = int(sys.argv[3])
        sw = [tuple(map(int, h.split(':'))) for h in p[4:bar]]
        sw = [h for h in sw if h[0] >= first]
        swa = [tuple(map(int, h.split(':'))) for h in p[bar + 1:]]
        swa = [h for h in swa if h[0] >= first]
        k = (src, dst, sport)
        n += 1
        if sorted(sw) != sorted(data.get(k, [])):
            bad += 1
            if bad < 5: print('data mismatch', k, sw, data.get(k))
        if sorted(swa) != sorted(ack.get(k, [])):
            bada += 1
            if bada < 5: print('ack mismatch', k, swa, ack.get(k))
    print(f'{n} flows, {bad} data-path and {bada} ack-path mismatches')
