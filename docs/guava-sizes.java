import com.google.common.hash.BloomFilter;
import java.lang.reflect.Method;
public class Sizes {
  public static void main(String[] a) throws Exception {
    Method bits = BloomFilter.class.getDeclaredMethod("optimalNumOfBits", long.class, double.class);
    Method hashes = BloomFilter.class.getDeclaredMethod("optimalNumOfHashFunctions", long.class, long.class);
    bits.setAccessible(true); hashes.setAccessible(true);
    long[] ns = {1, 10, 1000, 12345, 1000000, 10000000, 50000000, 1000000000L};
    double[] ps = {0.5, 0.1, 0.03, 0.01, 0.001, 1e-4, 1e-6};
    for (long n : ns) for (double p : ps) {
      long m = (Long) bits.invoke(null, n, p);
      int k = (Integer) hashes.invoke(null, n, m);
      System.out.println("[" + n + ", " + p + ", " + m + ", " + k + "],");
    }
  }
}
