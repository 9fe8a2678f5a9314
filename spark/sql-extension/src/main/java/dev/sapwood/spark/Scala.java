package dev.sapwood.spark;

import java.util.List;
import java.util.Map;
import scala.Option;
import scala.collection.JavaConverters;

/**
 * The few Scala values the extension hands to Spark, made from Java. Only
 * what Scala 2.12 and 2.13 spell alike: an immutable list is the {@code Seq}
 * of either (2.12's {@code scala.collection.Seq}, 2.13's
 * {@code scala.collection.immutable.Seq}).
 */
final class Scala {
    private Scala() {
    }

    static <T> Option<T> some(T value) {
        return Option.apply(value);
    }

    static <T> Option<T> none() {
        return Option.empty();
    }

    @SuppressWarnings("unchecked") // Map$.empty's type parameters are Scala's alone
    static scala.collection.immutable.Map<String, String> map(String... keysAndValues) {
        scala.collection.immutable.Map<String, String> out =
                scala.collection.immutable.Map$.MODULE$.empty();
        for (int k = 0; k < keysAndValues.length; k += 2) {
            out = out.updated(keysAndValues[k], keysAndValues[k + 1]);
        }
        return out;
    }

    @SuppressWarnings("deprecation") // JavaConverters: the one converter both versions have
    static <T> scala.collection.immutable.List<T> seq(List<T> items) {
        return JavaConverters.asScalaBuffer(items).toList();
    }

    @SuppressWarnings("deprecation")
    static Map<String, String> java(scala.collection.Map<String, String> map) {
        return JavaConverters.mapAsJavaMap(map);
    }
}
