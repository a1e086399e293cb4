package io.sr3.flink.ring;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SeedAddressesTest {

    private static InetAddress ip(String name, int... bytes) throws UnknownHostException {
        byte[] address = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            address[i] = (byte) bytes[i];
        }
        return InetAddress.getByAddress(name, address);
    }

    @Test
    void aNameOfAHeadlessServiceStandsForEveryAddressItResolvesToAtEachCall() throws Exception {
        List<InetAddress[]> answers = new ArrayList<>(List.of(
                new InetAddress[] {ip("tm.flink", 10, 0, 0, 1), ip("tm.flink", 10, 0, 0, 2), ip("tm.flink", 10, 0, 0, 1)},
                new InetAddress[] {ip("tm.flink", 10, 0, 0, 2), ip("tm.flink", 10, 0, 0, 3)}));
        List<String> asked = new ArrayList<>();
        SeedAddresses.Resolver dns = host -> {
            asked.add(host);
            return answers.remove(0);
        };
        Map<String, InetSocketAddress> first = SeedAddresses.resolve("tm.flink:6130", dns);
        assertThat(first.keySet()).containsExactly("10.0.0.1:6130", "10.0.0.2:6130");
        assertThat(first.get("10.0.0.2:6130").isUnresolved()).isFalse();
        assertThat(first.get("10.0.0.2:6130").getPort()).isEqualTo(6130);
        Map<String, InetSocketAddress> second = SeedAddresses.resolve("tm.flink:6130", dns);
        assertThat(second.keySet()).as("a pod that left and one that came").containsExactly("10.0.0.2:6130", "10.0.0.3:6130");
        assertThat(asked).containsExactly("tm.flink", "tm.flink");
    }

    @Test
    void aNameThatDoesNotResolveNowIsOneUnresolvedTargetUnderTheSeedItself() {
        Map<String, InetSocketAddress> none = SeedAddresses.resolve("tm.flink:6130", host -> {
            throw new UnknownHostException(host);
        });
        assertThat(none.keySet()).containsExactly("tm.flink:6130");
        assertThat(none.get("tm.flink:6130").isUnresolved()).isTrue();
        assertThat(SeedAddresses.resolve("tm.flink:6130", host -> new InetAddress[0]).keySet())
                .containsExactly("tm.flink:6130");
    }

    @Test
    void literalsResolveToThemselvesAndIpv6LosesItsBrackets() {
        assertThat(SeedAddresses.resolve("127.0.0.1:6130", InetAddress::getAllByName).keySet())
                .containsExactly("127.0.0.1:6130");
        List<String> asked = new ArrayList<>();
        SeedAddresses.resolve("[::1]:6130", host -> {
            asked.add(host);
            return InetAddress.getAllByName(host);
        });
        assertThat(asked).containsExactly("::1");
        assertThatThrownBy(() -> SeedAddresses.resolve("no-port", InetAddress::getAllByName))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
