/*
 * sum of the even-indexed elements, x[2 i] (float).
 */
float sum_even_f32(int n, float x[2 * n])
{
    float s = 0.0f;

    for (int i = 0; i < n; ++i)
        s += x[2 * i];
    return s;
}
