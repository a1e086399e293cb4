package io.sr3.flink.ring;

import io.sr3.flink.transport.Fuzzer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated bytes through {@link MemberCodec}: a PING's member record and a PING
 * answer's member list must decode or be refused with an {@link IllegalArgumentException}; see
 * {@link Fuzzer} for what else fails a run and how to replay one.
 */
class MemberCodecFuzzTest {

    private static final List<Member> MEMBERS = List.of(
            new Member("n0000000000000001", "10.0.0.1", 6130, "zone-a"),
            new Member("127.0.0.1", 1, ""),
            new Member("127.0.0.1", 65535, "z"),
            new Member("узел-✓", "host.example.com", 6131, "зона-€"),
            new Member("n".repeat(200), "h".repeat(253), 40000, "zone-" + "x".repeat(100)));

    @Test
    void memberRecords() throws Exception {
        List<byte[]> valid = new ArrayList<>();
        for (Member member : MEMBERS) {
            valid.add(MemberCodec.encode(member));
        }
        Fuzzer.Result result = new Fuzzer("MemberCodec.decode").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(MemberCodec::decode);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void memberLists() throws Exception {
        List<Member> many = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            many.add(new Member("n" + i, "10.0.1." + i, 6130 + i, i % 2 == 0 ? "zone-a" : ""));
        }
        List<byte[]> valid = List.of(MemberCodec.encodeList(List.of()), MemberCodec.encodeList(MEMBERS.subList(0, 1)),
                MemberCodec.encodeList(MEMBERS), MemberCodec.encodeList(many));
        Fuzzer.Result result = new Fuzzer("MemberCodec.decodeList").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(MemberCodec::decodeList);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }
}
