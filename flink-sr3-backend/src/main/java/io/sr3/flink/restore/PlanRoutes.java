package io.sr3.flink.restore;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How a {@link RestorePlan} is executed block by block: the route each block's relay request
 * travels from the recovering node to its holder, and the order the blocks are requested in.
 */
final class PlanRoutes {

    private PlanRoutes() {}

    /** The route of every planned block (by its index), from this node's neighbour to the holder. */
    static Map<Integer, List<String>> routes(RestorePlan plan) {
        Map<Integer, List<String>> routes = new HashMap<>();
        plan.assignment().forEach((holder, sources) -> {
            List<String> route = route(plan, holder);
            for (BlockSource source : sources) {
                routes.put(Integer.parseInt(source.key()), route);
            }
        });
        return routes;
    }

    private static List<String> route(RestorePlan plan, String holder) {
        return switch (plan.structure()) {
            case STAR -> List.of(holder);
            case LINE -> {
                List<String> chain = plan.chain();
                List<String> route = new ArrayList<>();
                for (int i = chain.size() - 1; i >= chain.indexOf(holder); i--) {
                    route.add(chain.get(i));
                }
                yield route;
            }
            case TREE -> {
                Deque<String> route = new ArrayDeque<>();
                for (String n = holder; !n.equals(RestorePlan.RECOVERING); n = plan.parents().get(n)) {
                    route.addFirst(n);
                }
                yield List.copyOf(route);
            }
        };
    }

    /** Block indexes, one holder after the other, so that every holder sends from the start. */
    static List<Integer> interleaved(RestorePlan plan) {
        List<Deque<BlockSource>> perHolder = new ArrayList<>();
        plan.assignment().values().forEach(list -> perHolder.add(new ArrayDeque<>(list)));
        List<Integer> order = new ArrayList<>();
        boolean any = true;
        while (any) {
            any = false;
            for (Deque<BlockSource> sources : perHolder) {
                BlockSource next = sources.poll();
                if (next != null) {
                    order.add(Integer.parseInt(next.key()));
                    any = true;
                }
            }
        }
        return order;
    }
}
