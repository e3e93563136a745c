/*
 * vector copy with conversion int -> float (float).
 */
void convert_i32_f32_f32(int n, int x[n], float y[n])
{
    int i;

    for (i = 0; i < n; i++)
        y[i] = (float)x[i];
}
