/*
 * STREAM add c = a + b (double).
 */
void stream_add_f64(int n, double a[n], double b[n], double c[n])
{
    int i;

    for (i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}
