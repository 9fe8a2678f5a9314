package dev.sapwood.spark;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.trees.Origin;
import scala.Option;
import scala.Tuple2;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/** The few Scala values the extension hands to Spark, made from Java. */
final class Scala {
    private Scala() {
    }

    static <T> Option<T> some(T value) {
        return Option.apply(value);
    }

    static <T> Option<T> none() {
        return Option.empty();
    }

    static Origin origin(int line, int position) {
        return new Origin(some(line), some(position), none(), none(), none(), none(), none());
    }

    @SuppressWarnings("unchecked")
    static scala.collection.immutable.Map<String, String> map(String... keysAndValues) {
        scala.collection.immutable.Map<String, String> out =
                scala.collection.immutable.Map$.MODULE$.empty();
        for (int k = 0; k < keysAndValues.length; k += 2) {
            out = out.$plus(new Tuple2<>(keysAndValues[k], keysAndValues[k + 1]));
        }
        return out;
    }

    static <T> Seq<T> seq(List<T> items) {
        return JavaConverters.asScalaBuffer(items).toList();
    }

    static Map<String, String> java(scala.collection.Map<String, String> map) {
        return JavaConverters.mapAsJavaMap(map);
    }
}
